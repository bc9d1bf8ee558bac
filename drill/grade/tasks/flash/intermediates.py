"""What ``drill grade --trace`` compares the user's flash_attention against: per key block, the scores, the
running max, p = exp(scores - max), the running sum and the accumulator (causal)."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, scale_factors
from drill.text.messages import Ev

B, H, TQ, TK, D, DV, BLOCK = 2, 3, 15, 15, 4, 6, 7  # blocks of 7, 7 and 1; Tq = Tk, where every causal alignment agrees


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, q scaled so that the scaled scores reach ±LARGE_PEAK."""
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, t, d, generator=gen, dtype=torch.float64) for t, d in ((TQ, D), (TK, D), (TK, DV)))
    if large:
        q = q * LARGE_PEAK * math.sqrt(D) / (q @ k.transpose(-2, -1)).abs().max()
    rows = torch.arange(TQ)[:, None] + (TK - TQ)
    m = torch.full((B, H, TQ, 1), float("-inf"), dtype=torch.float64)
    l = torch.zeros(B, H, TQ, 1, dtype=torch.float64)
    acc = torch.zeros(B, H, TQ, DV, dtype=torch.float64)
    steps = [("q", q), ("k", k), ("v", v)]
    for n, start in enumerate(range(0, TK, BLOCK), 1):
        kb, vb = k[..., start : start + BLOCK, :], v[..., start : start + BLOCK, :]
        raw = q @ kb.transpose(-2, -1)
        scores = raw / math.sqrt(D)
        cols = torch.arange(start, start + kb.shape[-2])[None, :]
        masked = scores.masked_fill(cols > rows, float("-inf"))
        new_m = torch.maximum(m, masked.amax(-1, keepdim=True))
        p = torch.exp(masked - new_m)
        correction = torch.exp(m - new_m)
        l = l * correction + p.sum(-1, keepdim=True)
        acc = acc * correction + p @ vb
        m = new_m
        steps += [(Ev("k block {n}", n=n), kb), (Ev("v block {n}", n=n), vb), (Ev("scores, block {n}", n=n), raw),
                  (Ev("scaled, block {n}", n=n), scores), (Ev("masked, block {n}", n=n), masked),
                  (Ev("block max {n}", n=n), masked.amax(-1, keepdim=True)), (Ev("running max after block {n}", n=n), new_m),
                  (Ev("correction, block {n}", n=n), correction), (Ev("p, block {n}", n=n), p),
                  (Ev("running sum after block {n}", n=n), l), (Ev("accumulator after block {n}", n=n), acc)]  # fmt: skip
    steps.append(("output", acc / l))
    return Case(ctx.entry, (q, k, v), steps, kwargs={"causal": True, "block_size": BLOCK}, factors=scale_factors(D), unit=PAIRS,
                label=LARGE_SCORES if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: an exp without the running max subtracted overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
