"""What ``drill grade --trace`` compares the user's softmax against: the row max, the shifted scores, exp, the sum."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

SHAPE = (2, 3, 5, 7)  # softmax over the last dim (7); no two sizes equal


def case(ctx) -> Case:
    x = 4 * torch.randn(*SHAPE, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    row_max = x.amax(-1, keepdim=True)
    shifted = x - row_max
    e = shifted.exp()
    total = e.sum(-1, keepdim=True)
    steps = [("x", x), ("row max", row_max), ("x - max", shifted), ("exp(x - max)", e), ("sum of exp", total),
             ("output", e / total)]  # fmt: skip
    return Case(ctx.entry, (x,), steps, kwargs={"dim": -1}, zh={"row max": "行最大值", "sum of exp": "exp 之和"})
