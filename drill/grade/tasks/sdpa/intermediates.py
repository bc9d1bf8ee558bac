"""What ``drill grade --trace`` compares the user's scaled_dot_product_attention against, step by step."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import Case
from drill.grade.tracing import fixed_mask, scale_factors

B, H, TQ, TK, D, DV = 2, 3, 5, 7, 4, 6  # no two sizes equal, so a transposition cannot hide


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, t, d, generator=gen, dtype=torch.float64) for t, d in ((TQ, D), (TK, D), (TK, DV)))
    mask = fixed_mask((B, 1, TQ, TK), gen)
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(D)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    steps = [("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled), ("masked", masked),
             ("weights", weights), ("output", weights @ v)]  # fmt: skip
    return Case(ctx.entry, (q, k, v, mask), steps, factors=scale_factors(D))
