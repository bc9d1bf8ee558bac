"""What ``drill grade --trace`` compares a kernel's launcher against: its inputs and the RMSNorm it returns.

The kernel's own steps (sum of squares, rsqrt) run in Triton's interpreter, where no torch op
records them: the trace sees the launcher's tensors and the output the launch filled in.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

SHAPE = (5, 19)  # N not a power of two: the masked tail is part of every row


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = 3 * torch.randn(*SHAPE, generator=gen, dtype=torch.float64)
    w = 1 + 0.5 * torch.randn(SHAPE[1], generator=gen, dtype=torch.float64)
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return Case(ctx.entry, (x.float(), w.float()), [("x", x), ("weight", w), ("output", out)], table=True)
