"""What ``drill grade --trace`` compares the user's SwiGLU against (its own weights): gate, up, silu(gate),
the gated product, the down projection."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.tasks.swiglu.task import build
from drill.grade.trace_match import Case
from drill.grade.tracing import NoTrace


def case(ctx) -> Case:
    built = build(ctx, torch.float64)
    if built.names is None:
        raise NoTrace("no recognised layout")
    x = torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(7), dtype=torch.float64)  # d_model 6, d_ff 10
    (wg, bg), (wu, bu), (wd, bd) = built.weights(torch.float64)
    gate, up = F.linear(x, wg, bg), F.linear(x, wu, bu)
    hidden = F.silu(gate) * up
    steps = [("x", x), ("gate (w1 x)", gate), ("up (w3 x)", up), ("sigmoid(gate)", torch.sigmoid(gate)),
             ("silu(gate)", F.silu(gate)), ("silu(gate) · up", hidden), ("output", F.linear(hidden, wd, bd))]  # fmt: skip
    return Case(built.module, (x,), steps)
