"""What ``drill grade --trace`` compares the user's GroupedQueryAttention against, step by step (its own weights):
the kv heads before and after sharing, then attention as in mha."""

from __future__ import annotations

import math

import torch

from drill.grade.checks.module import self_attention_args
from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.gqa.task import TASK
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, fixed_mask, module_leaks, scale_factors
from drill.text.messages import Ev

B, T, H, KV, HD = 7, 5, 6, 2, 4  # groups of 3 query heads per kv head; no two sizes equal


def case(ctx) -> Case:
    built = TASK.build(ctx, H * HD, H, torch.float64, n_kv=KV)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, T, H * HD, generator=gen, dtype=torch.float64)
    mask = fixed_mask((B, 1, T, T), gen)
    params = built.params(torch.float64)
    q, k, v = built.layout.project_qkv(x, params)
    q = split_heads(q, H, HD)
    k_kv, v_kv = split_heads(k, KV, HD), split_heads(v, KV, HD)
    k_shared, v_shared = (z.repeat_interleave(H // KV, dim=1) for z in (k_kv, v_kv))
    scores = q @ k_shared.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v_shared
    merged = merge_heads(attended)
    steps = [("x", x), ("q", q), (Ev("k (kv heads)"), k_kv), (Ev("v (kv heads)"), v_kv),
             (Ev("k shared per query head"), k_shared), (Ev("v shared per query head"), v_shared), ("scores", scores),
             ("scaled", scaled), ("masked", masked), ("weights", weights), ("weights·v", attended), (Ev("merged heads"), merged),
             ("output", built.layout.project_out(merged, params))]  # fmt: skip
    return Case(built.module, self_attention_args(ctx, x, mask), steps, factors=scale_factors(HD, H * HD), unit=PAIRS)


def leaks(ctx, failed):
    return module_leaks(TASK, ctx, failed, mask_arg=True)
