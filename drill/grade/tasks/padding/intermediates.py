"""What ``drill grade --trace`` compares the user's make_attention_mask against, step by step (exactly: bools)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.text.messages import Ev

LENGTHS, T = (5, 2, 4), 6  # B = 3, T = 6: every size different, one sample padded past half


def case(ctx) -> Case:
    lengths = torch.tensor(LENGTHS)
    positions = torch.arange(T)
    real = positions[None, :] < lengths[:, None]  # [B, T]: key j of sample b is a real token
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    padded = real[:, None, None, :].expand(-1, 1, T, T)
    steps = [("lengths", lengths), ("positions", positions), (Ev("real keys"), real), (Ev("causal"), causal),
             (Ev("padding mask"), padded), ("output", padded & causal)]  # fmt: skip
    return Case(ctx.entry, (lengths, T), steps, kwargs={"causal": True}, exact=True, unit=PAIRS)
