"""What ``drill grade --trace`` compares a kernel's launcher against: its input and the prefix sum it returns.

The scan itself runs in Triton's interpreter, where no torch op records it: the trace sees the
launcher's tensors and the output the launch filled in.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

SHAPE = (5, 19)  # N not a power of two: the masked tail is part of every row


def case(ctx) -> Case:
    x = torch.randn(*SHAPE, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    return Case(ctx.entry, (x.float(),), [("x", x), ("output", x.cumsum(-1))], table=True)
