"""What ``drill grade --trace`` compares the user's flash_attention against: per key block, the scores, the
running max, p = exp(scores - max), the running sum and the accumulator (causal)."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, scale_factors

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
    steps, zh = [("q", q), ("k", k), ("v", v)], {}
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
        steps += [(f"k block {n}", kb), (f"v block {n}", vb), (f"scores, block {n}", raw), (f"scaled, block {n}", scores),
                  (f"masked, block {n}", masked), (f"block max {n}", masked.amax(-1, keepdim=True)),
                  (f"running max after block {n}", new_m), (f"correction, block {n}", correction), (f"p, block {n}", p),
                  (f"running sum after block {n}", l), (f"accumulator after block {n}", acc)]  # fmt: skip
        zh |= {f"k block {n}": f"第 {n} 块的 k", f"v block {n}": f"第 {n} 块的 v", f"scores, block {n}": f"第 {n} 块的 scores",
               f"scaled, block {n}": f"第 {n} 块的 scaled", f"masked, block {n}": f"第 {n} 块的 masked",
               f"block max {n}": f"第 {n} 块的最大值", f"running max after block {n}": f"第 {n} 块后的累计最大值",
               f"correction, block {n}": f"第 {n} 块的修正因子", f"p, block {n}": f"第 {n} 块的 p",
               f"running sum after block {n}": f"第 {n} 块后的累计和", f"accumulator after block {n}": f"第 {n} 块后的累加器"}  # fmt: skip
    steps.append(("output", acc / l))
    return Case(ctx.entry, (q, k, v), steps, kwargs={"causal": True, "block_size": BLOCK}, factors=scale_factors(D), unit=PAIRS,
                zh=zh, label=LARGE_SCORES if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: an exp without the running max subtracted overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
