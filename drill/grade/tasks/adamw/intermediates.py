"""What ``drill grade --trace`` compares the user's adamw_step against: step 3 from a warm state (m and v not
zero, so β1·m and β2·v show), lr = 0.1, betas (0.8, 0.9), eps = 1e-2, weight_decay = 0.2 (none a default, so a
hard-coded one shows): the decoupled decay, both moments, the bias corrections, m̂, v̂, √v̂ + ε, the Adam update and
the new param. param, exp_avg and exp_avg_sq are updated in place (the contract); grad must stay as it came.

The steps are in the order a diverging line is most likely to have meant: the decay next to param, m̂ next to m.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

SHAPE = (3, 5)
STEP, LR, BETAS, EPS, WD = 3, 0.1, (0.8, 0.9), 1e-2, 0.2
NEW_PARAM = Ev("new param")
UPDATED = (0, 2, 3)  # param, exp_avg, exp_avg_sq: the call inputs the contract changes in place


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    p, g, m = (torch.randn(*SHAPE, generator=gen, dtype=torch.float64) for _ in range(3))
    v = torch.randn(*SHAPE, generator=gen, dtype=torch.float64) ** 2 + 0.1
    b1, b2 = BETAS
    bc1, bc2 = 1 - b1**STEP, 1 - b2**STEP
    m_new, v_new = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    m_hat, v_hat = m_new / bc1, v_new / bc2
    denom = v_hat.sqrt() + EPS
    update = LR * m_hat / denom
    decayed = p * (1 - LR * WD)
    steps = [(Ev("param"), p), ("lr·wd·p", LR * WD * p), ("p·(1 - lr·wd)", decayed), ("wd·p", WD * p),
             ("grad", g), ("exp_avg", m), ("β1·m", b1 * m), ("(1 - β1)·g", (1 - b1) * g), ("m = β1·m + (1 - β1)·g", m_new),
             ("1 - β1^t", torch.tensor(bc1, dtype=torch.float64)), ("m̂ = m / (1 - β1^t)", m_hat),
             ("exp_avg_sq", v), ("β2·v", b2 * v), ("g²", g * g), ("(1 - β2)·g²", (1 - b2) * g * g), ("v = β2·v + (1 - β2)·g²", v_new),
             ("1 - β2^t", torch.tensor(bc2, dtype=torch.float64)), ("v̂ = v / (1 - β2^t)", v_hat), ("√v", v_new.sqrt()),
             ("√v̂", v_hat.sqrt()), ("√v̂ + ε", denom), ("m̂ / (√v̂ + ε)", m_hat / denom), ("lr·m̂", LR * m_hat),
             ("lr·m̂ / (√v̂ + ε)", update), (NEW_PARAM, decayed - update)]  # fmt: skip
    factors = [((1 - WD) / (1 - LR * WD), Ev("the decay not scaled by lr: p·(1 - wd)")),
               (bc1 / (1 - b1 ** (STEP + 1)), Ev("bias-corrected with step + 1")),
               (bc1 / (1 - b1 ** (STEP - 1)), Ev("bias-corrected with step - 1"))]  # fmt: skip
    return Case(
        ctx.entry,
        (p, g, m, v, STEP, LR, BETAS, EPS, WD),
        steps,
        output=NEW_PARAM,
        factors=factors,
        updates=UPDATED,
        returned=(NEW_PARAM, "m = β1·m + (1 - β1)·g", "v = β2·v + (1 - β2)·g²"),
    )
