"""What ``drill grade --trace`` compares the user's CrossAttention against, step by step (its own weights):
queries from x, keys and values from the context."""

from __future__ import annotations

import math

import torch

from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.cross.task import TASK
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, fixed_mask, scale_factors

B, TQ, TK, H, HD = 2, 5, 7, 3, 4  # no two sizes equal: a query/key mix-up shows as a shape


def case(ctx) -> Case:
    built = TASK.build(ctx, H * HD, H, torch.float64)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x, context = (torch.randn(B, t, H * HD, generator=gen, dtype=torch.float64) for t in (TQ, TK))
    mask = fixed_mask((B, 1, TQ, TK), gen)
    params = built.params(torch.float64)
    q = split_heads(built.layout.project_qkv(x, params)[0], H, HD)
    _, k, v = (split_heads(p, H, HD) for p in built.layout.project_qkv(context, params))
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    steps = [("x", x), ("context", context), ("q (from x)", q), ("k (from context)", k), ("v (from context)", v),
             ("scores", scores), ("scaled", scaled), ("masked", masked), ("weights", weights), ("weights·v", attended),
             ("merged heads", merged), ("output", built.layout.project_out(merged, params))]  # fmt: skip
    zh = {"q (from x)": "q（来自 x）", "k (from context)": "k（来自 context）", "v (from context)": "v（来自 context）",
          "merged heads": "合并各头"}  # fmt: skip
    return Case(built.module, (x, context, mask), steps, factors=scale_factors(HD, H * HD), unit=PAIRS, zh=zh)
