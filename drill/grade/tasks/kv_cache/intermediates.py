"""What ``drill grade --trace`` compares the user's KVCacheAttention against: the second call (a chunk of 5
tokens after 6 cached ones), with the cache grown to 11 keys and the mask aligned bottom-right. The stress inputs
reach the same call another way: as a third call, or as a new sequence's on a module that decoded another one."""

from __future__ import annotations

import math

import torch

from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.kv_cache.task import TASK
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, scale_factors
from drill.text.messages import Ev

B, H, HD, CACHED, NEW = 2, 3, 4, 6, 5  # 11 keys in all; no two sizes equal


def case(ctx, sizes: tuple[int, ...] = (CACHED,), before: bool = False, label: Ev | None = None) -> Case:
    """The traced call after untraced ones that feed the 6 cached tokens in chunks of ``sizes``, each given the
    last one's cache; ``before``: another sequence was decoded on the module first (what it left must not show)."""
    built = TASK.build(ctx, H * HD, H, torch.float64)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, CACHED + NEW, H * HD, generator=gen, dtype=torch.float64)
    chunk = x[:, CACHED:].contiguous()
    if before:
        ctx.call(built.module, torch.randn(B, CACHED, H * HD, generator=gen, dtype=torch.float64), None)
    ret, start = (None, None), 0
    for n in sizes:  # untraced: the cache they build is what the traced call gets
        ret = ctx.call(built.module, x[:, start : start + n].contiguous(), ret[1])
        if not (isinstance(ret, (tuple, list)) and len(ret) == 2):
            raise NoTrace("forward(x, cache) did not return (out, cache)")
        start += n
    params = built.params(torch.float64)
    q_all, k_all, v_all = (split_heads(p, H, HD) for p in built.layout.project_qkv(x, params))
    q = q_all[:, :, CACHED:]
    total = CACHED + NEW
    allowed = torch.ones(NEW, total, dtype=torch.bool).tril(diagonal=total - NEW)  # bottom-right: query i sees keys 0..6+i
    scores = q @ k_all.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v_all
    merged = merge_heads(attended)
    steps = [(Ev("x (new chunk)"), chunk), (Ev("q (new tokens)"), q), (Ev("k cached"), k_all[:, :, :CACHED]),
             (Ev("v cached"), v_all[:, :, :CACHED]), (Ev("k new"), k_all[:, :, CACHED:]), (Ev("v new"), v_all[:, :, CACHED:]),
             (Ev("k cached + new"), k_all), (Ev("v cached + new"), v_all), ("scores", scores), ("scaled", scaled),
             (Ev("masked (bottom-right)"), masked), ("weights", weights), ("weights·v", attended), (Ev("merged heads"), merged),
             ("output", built.layout.project_out(merged, params))]  # fmt: skip
    return Case(built.module, (chunk, ret[1]), steps, factors=scale_factors(HD, H * HD), unit=PAIRS, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Calls the second one hides bugs on, for the checks that failed: a third call (a cache that keeps only the
    last chunk shows only then), a new sequence (cache=None) on a module that decoded another one."""
    found = []
    if any(f.startswith("numerical.decode-") for f in failed):
        found.append(case(ctx, (4, 2), label=Ev("a third call (4 tokens, then 2, then 5)")))
    if "robustness.fresh-sequence" in failed:
        found.append(case(ctx, before=True, label=Ev("a new sequence on a module that decoded another one")))
    return found
