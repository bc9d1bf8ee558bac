"""What ``drill grade --trace`` compares the user's CrossAttention against, step by step (its own weights):
queries from x, keys and values from the context. Also its leak pictures (padded context keys)."""

from __future__ import annotations

import math

import torch

from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.cross.task import TASK
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, NoTrace, fixed_mask, scale_factors
from drill.text.messages import Ev

B, TQ, TK, H, HD = 2, 5, 7, 3, 4  # no two sizes equal: a query/key mix-up shows as a shape


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, x and the context scaled so that the scaled scores reach ±LARGE_PEAK."""
    built = TASK.build(ctx, H * HD, H, torch.float64)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x, context = (torch.randn(B, t, H * HD, generator=gen, dtype=torch.float64) for t in (TQ, TK))
    mask = fixed_mask((B, 1, TQ, TK), gen)
    params = built.params(torch.float64)

    def project(x, context):
        q = split_heads(built.layout.project_qkv(x, params)[0], H, HD)
        return (q, *(split_heads(p, H, HD) for p in built.layout.project_qkv(context, params)[1:]))

    q, k, v = project(x, context)
    if large:  # the scores grow with |x| * |context| (the biases aside)
        grow = math.sqrt(LARGE_PEAK * math.sqrt(HD) / (q @ k.transpose(-2, -1)).abs().max().item())
        x, context = x * grow, context * grow
        q, k, v = project(x, context)
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    steps = [("x", x), ("context", context), (Ev("q (from x)"), q), (Ev("k (from context)"), k), (Ev("v (from context)"), v),
             ("scores", scores), ("scaled", scaled), ("masked", masked), ("weights", weights), ("weights·v", attended),
             (Ev("merged heads"), merged), ("output", built.layout.project_out(merged, params))]  # fmt: skip
    return Case(built.module, (x, context, mask), steps, factors=scale_factors(HD, H * HD), unit=PAIRS,
                label=LARGE_SCORES if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: an exp without the max subtracted overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []


def leaks(ctx, failed: set[str]) -> list[dict]:
    """The leak pictures when the padding check failed: per sample, which context keys reach each query (the
    keys past the sample's context length must reach none)."""
    from drill.grade import leak
    from drill.grade.checks.common import padding_mask

    if "mask-leak.padding" not in failed:
        return []
    built = TASK.build(ctx, H * HD, H, torch.float64)
    gen = torch.Generator().manual_seed(13)
    lengths = (7, 1, 4)
    x, context = (torch.randn(3, t, H * HD, generator=gen, dtype=torch.float64) for t in (TQ, TK))
    mask = padding_mask(lengths, TK, ctx.device)
    seen = leak.through(lambda c: TASK.forward(ctx, built.module, x, c, mask), context, leak.last_dims)  # [B, Tq, Tk]
    return [leak.picture(Ev("padding, sample {b} (context length {n})", b=b, n=n), (torch.arange(TK) < n).expand(TQ, TK), seen[b])
            for b, n in enumerate(lengths)]  # fmt: skip
