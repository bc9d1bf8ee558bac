"""What ``drill grade --trace`` compares the user's clip_grad_norm against: three gradients of shapes [3, 4], [5]
and [2, 7] with a global norm of 5, clipped to max_norm 2 (the coefficient 0.4 is below 1, so clamping it changes
nothing): each grad squared, its squared norm and norm, the per-parameter norms, the total norm, the coefficient
max_norm / (total + 1e-6) and each clipped grad. The 1e-6 itself is below the float32 tolerance at this norm.

The parameters cross as nn.Parameters whose ``.grad`` the recorder sees appear from no input (an attribute read),
so the case is a ``table``: what the ``.grad`` reads return plays the inputs' part.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.grade.user.wire import Params
from drill.text.messages import Ev

SHAPES = ((3, 4), (5,), (2, 7))
NORM, MAX_NORM = 5.0, 2.0
TOTAL = Ev("total norm")


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    grads = [torch.randn(*s, generator=gen, dtype=torch.float64) for s in SHAPES]
    total = torch.sqrt(sum((g**2).sum() for g in grads))
    grads = [g * (NORM / total) for g in grads]
    values = [torch.randn(*s, generator=gen, dtype=torch.float64) for s in SHAPES]
    norms = torch.stack([g.norm() for g in grads])
    total = norms.norm()
    coef = MAX_NORM / (total + 1e-6)
    n = range(len(grads))
    steps = [(Ev("grad {i}", i=i), grads[i]) for i in n] + [(Ev("grad {i}²", i=i), grads[i] ** 2) for i in n]
    steps += [(Ev("‖grad {i}‖²", i=i), (grads[i] ** 2).sum()) for i in n] + [(Ev("‖grad {i}‖", i=i), norms[i]) for i in n]
    steps += [(Ev("per-parameter norms"), norms), (Ev("total norm²"), total**2), (TOTAL, total),
              (Ev("clip coefficient = max_norm / (total + 1e-6)"), coef)]  # fmt: skip
    clipped = [(Ev("clipped grad {i}", i=i), grads[i] * coef) for i in n]
    return Case(
        ctx.entry,
        (Params(tuple(zip(values, grads))), MAX_NORM),
        steps + clipped,
        output=TOTAL,
        table=True,
        returned=(TOTAL, *(name for name, _ in clipped)),
        updates=tuple(2 * i + 1 for i in n),  # sent as value, grad per parameter: the contract clips the grads in place
    )
