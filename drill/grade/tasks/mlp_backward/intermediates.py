"""What ``drill grade --trace`` compares the user's mlp_forward_backward against: N=5, D=3, H=6, C=4 (pairwise
different, so a transposed gradient shows); the forward (z1, h, logits, the log-softmax through the row max, the loss,
which is the output) and the backward (p, p - one_hot, (p - one_hot) / N, dw2, db2, dh, the ReLU mask z1 > 0, dz1,
dw1, db1). The stress input, when the large-logits check failed: logits in the hundreds, where exp overflows."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.trace_match import Case
from drill.text.messages import Ev

N, D, H, C = 5, 3, 6, 4
LARGE = Ev("logits in the hundreds")


def case(ctx, large: bool = False) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(N, D, generator=gen, dtype=torch.float64)
    w1 = torch.randn(D, H, generator=gen, dtype=torch.float64)
    b1 = 0.3 * torch.randn(H, generator=gen, dtype=torch.float64)
    w2 = torch.randn(H, C, generator=gen, dtype=torch.float64) * (300.0 if large else 1.0)
    b2 = 0.3 * torch.randn(C, generator=gen, dtype=torch.float64)
    y = torch.tensor([2, 0, 3, 1, 2])
    z1 = x @ w1 + b1
    h = torch.relu(z1)
    logits = h @ w2 + b2
    row_max = logits.amax(-1, keepdim=True)
    shifted = logits - row_max
    logp = shifted - shifted.exp().sum(-1, keepdim=True).log()
    nll = -logp[torch.arange(N), y]
    p = logp.exp()
    onehot = F.one_hot(y, C).double()
    dlogits = (p - onehot) / N
    dh = dlogits @ w2.T
    mask = z1 > 0
    dz1 = dh * mask
    steps = [("x", x), (Ev("z1 = x·w1 + b1"), z1), (Ev("h = relu(z1)"), h), ("logits", logits), (Ev("row max"), row_max),
             (Ev("logits - max"), shifted), ("exp", shifted.exp()), (Ev("sum of exp"), shifted.exp().sum(-1, keepdim=True)),
             (Ev("log-probabilities"), logp), (Ev("-log p[y]"), nll), ("output", nll.mean()), (Ev("softmax p"), p), (Ev("one-hot of y"), onehot),
             (Ev("p - one_hot"), p - onehot), (Ev("dlogits = (p - one_hot) / N"), dlogits), ("dw2", h.T @ dlogits), ("db2", dlogits.sum(0)),
             ("dh", dh), (Ev("ReLU mask z1 > 0"), mask), (Ev("ReLU mask (0/1)"), mask.double()), ("dz1", dz1), ("dw1", x.T @ dz1),
             ("db1", dz1.sum(0))]  # fmt: skip
    if large:  # exp of the unshifted logits is inf: no step to match, so the overflowing exp is where the trace stops
        steps = [(name, t) for name, t in steps if torch.isfinite(t).all()]
    factors = [(N, Ev("not divided by N: the 1/N of the mean is missing")), (1 / N, Ev("divided by N twice"))]
    return Case(ctx.entry, (x, w1, b1, w2, b2, y), steps, returned=("output", "dw1", "db1", "dw2", "db2"), factors=factors,
                label=LARGE if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Logits in the hundreds when the large-logits check failed: exp without the max overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
