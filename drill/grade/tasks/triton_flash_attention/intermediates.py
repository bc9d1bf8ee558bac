"""What ``drill grade --trace`` compares a kernel's launcher against: its inputs, o and lse.

The kernel's own steps (scores, running max, rescaled sums per key block) run in Triton's
interpreter, where no torch op records them: the trace sees the launcher's tensors and the two
outputs the launch filled in.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

SHAPE = (1, 2, 19, 16)  # T not a multiple of any block: the masked tail is part of every head
LSE = Ev("lse")


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(*SHAPE, generator=gen, dtype=torch.float64) for _ in range(3))
    t = SHAPE[2]
    s = (q @ k.transpose(-2, -1) / SHAPE[3] ** 0.5).masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    lse = s.logsumexp(-1)
    o = (s - lse[..., None]).exp() @ v
    return Case(ctx.entry, (q.float(), k.float(), v.float()), [("q", q), ("k", k), ("v", v), ("o", o), (LSE, lse)],
                output="o", kwargs={"causal": True}, table=True, returned=("o", LSE))  # fmt: skip
