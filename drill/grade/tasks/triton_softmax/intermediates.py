"""What ``drill grade --trace`` compares a kernel's launcher against: its input and the softmax it returns.

The kernel's own steps (max, exp, sum per block) run in Triton's interpreter, where no torch op
records them: the trace sees the launcher's tensors and the output the launch filled in.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

SHAPE = (5, 19)  # N not a power of two: the masked tail is part of every row


def case(ctx) -> Case:
    x = 4 * torch.randn(*SHAPE, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    shifted = x - x.amax(-1, keepdim=True)
    e = shifted.exp()
    return Case(ctx.entry, (x.float(),), [("x", x), ("output", e / e.sum(-1, keepdim=True))], table=True)  # the output comes from empty: it plays an input's part
