"""What ``drill grade --trace`` compares the user's sliding_window_attention against, step by step."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import scale_factors
from drill.text.messages import Ev

B, H, T, D, WINDOW = 2, 3, 7, 4, 5  # window 5 of 7 positions: both edges of the band show; no two sizes equal


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, T, D, generator=gen, dtype=torch.float64) for _ in range(3))
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    allowed = (j <= i) & (j > i - WINDOW)
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(D)
    masked = scaled.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    steps = [("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled), (Ev("masked (causal band)"), masked),
             ("weights", weights), ("output", weights @ v)]  # fmt: skip
    return Case(ctx.entry, (q, k, v, WINDOW), steps, factors=scale_factors(D), unit=PAIRS)
