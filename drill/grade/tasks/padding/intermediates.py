"""What ``drill grade --trace`` compares the user's make_attention_mask against, step by step (exactly: bools)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import PAIRS, Case

LENGTHS, T = (5, 2, 4), 6  # B = 3, T = 6: every size different, one sample padded past half


def case(ctx) -> Case:
    lengths = torch.tensor(LENGTHS)
    positions = torch.arange(T)
    real = positions[None, :] < lengths[:, None]  # [B, T]: key j of sample b is a real token
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    padded = real[:, None, None, :].expand(-1, 1, T, T)
    steps = [("lengths", lengths), ("positions", positions), ("real keys", real), ("causal", causal),
             ("padding mask", padded), ("output", padded & causal)]  # fmt: skip
    zh = {"real keys": "有效 key（非 padding）", "causal": "因果掩码", "padding mask": "padding 掩码"}
    return Case(ctx.entry, (lengths, T), steps, kwargs={"causal": True}, exact=True, unit=PAIRS, zh=zh)
