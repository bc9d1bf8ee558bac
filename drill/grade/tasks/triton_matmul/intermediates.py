"""What ``drill grade --trace`` compares a kernel's launcher against: its inputs and the product it returns.

The kernel's own steps (tile loads, tl.dot per K step) run in Triton's interpreter, where no torch op
records them: the trace sees the launcher's tensors and the output the launch filled in.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

M, K, N = 19, 23, 17  # no size a multiple of a block: every tile on an edge is masked


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(M, K, generator=gen, dtype=torch.float64)
    b = torch.randn(K, N, generator=gen, dtype=torch.float64)
    return Case(ctx.entry, (a.float(), b.float()), [("a", a), ("b", b), ("output", a @ b)], table=True)
