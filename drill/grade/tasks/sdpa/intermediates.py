"""What ``drill grade --trace`` compares the user's scaled_dot_product_attention against, step by step."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, fixed_mask, scale_factors
from drill.text.messages import Ev

B, H, TQ, TK, D, DV = 2, 3, 5, 7, 4, 6  # no two sizes equal, so a transposition cannot hide


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, q scaled so that the scaled scores reach ±LARGE_PEAK."""
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, t, d, generator=gen, dtype=torch.float64) for t, d in ((TQ, D), (TK, D), (TK, DV)))
    mask = fixed_mask((B, 1, TQ, TK), gen)
    if large:
        q = q * LARGE_PEAK * math.sqrt(D) / (q @ k.transpose(-2, -1)).abs().max()
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(D)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    steps = [("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled), ("masked", masked),
             ("weights", weights), ("output", weights @ v)]  # fmt: skip
    return Case(ctx.entry, (q, k, v, mask), steps, factors=scale_factors(D), unit=PAIRS, label=LARGE_SCORES if large else None)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: an exp without the max subtracted overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []


def leaks(ctx, failed: set[str]) -> list[dict]:
    """The leak pictures for the mask-leak checks that failed: the causal pattern, padding per sample."""
    from drill.grade import leak
    from drill.grade.checks.common import padding_mask
    from drill.grade.reference import causal_mask
    from drill.grade.tasks.sdpa.task import run

    gen = torch.Generator().manual_seed(13)
    found = []
    if failed & {"mask-leak.future", "mask-leak.jacobian"}:
        x, mask = torch.randn(1, 8, D, generator=gen, dtype=torch.float64), causal_mask(8)
        seen = leak.through(lambda z: run(ctx, z, z, z, mask)[0], x, leak.last_dims)[0]
        found.append(leak.picture(Ev("causal mask: may query i see key j?"), mask, seen))
    if "mask-leak.padding" in failed:
        lengths = (7, 1, 4)
        q, k, v = (torch.randn(3, 2, t, d, generator=gen, dtype=torch.float64) for t, d in ((TQ, D), (TK, D), (TK, DV)))
        mask = padding_mask(lengths, TK, ctx.device)
        per_query = lambda out: out.abs().amax(dim=(1, 3))  # noqa: E731 - [B, H, Tq, Dv] -> [B, Tq]
        seen = leak.through(lambda kk, vv: run(ctx, q, kk, vv, mask)[0], k, per_query, axis=2, others=(v,))
        for b, n in enumerate(lengths):
            found.append(leak.picture(Ev("padding, sample {b} (length {n})", b=b, n=n), mask[b, 0].expand(TQ, TK), seen[b]))
    return found
