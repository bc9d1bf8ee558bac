"""What ``drill grade --trace`` compares the user's split_kv_attention against: per chunk of keys, the scores,
the chunk's max, p, its sum, the partial output normalised inside the chunk and its log-sum-exp; then the
merge (the stacked log-sum-exps and partials, their max, the merge weights, the weighted sum). The
all-chunks-at-once layout (keys padded to whole chunks, padded scores at -inf) is named too."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, scale_factors

B, H, TQ, TK, D, DV, N_SPLITS = 2, 3, 5, 27, 9, 10, 4  # chunks of 7, 7, 7 and 6; no two sizes equal


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, q scaled so that the scaled scores reach ±LARGE_PEAK; 13 keys in 2 chunks (7 and 6)
    keep its trace short (its matching costs records × steps: 4 chunks take ~0.5 s more on a failed grade)."""
    tk, n_splits = (13, 2) if large else (TK, N_SPLITS)
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, t, d, generator=gen, dtype=torch.float64) for t, d in ((TQ, D), (tk, D), (tk, DV)))
    if large:
        q = q * LARGE_PEAK * math.sqrt(D) / (q @ k.transpose(-2, -1)).abs().max()
    size = -(-tk // n_splits)
    steps, zh = [("q", q), ("k", k), ("v", v)], {}
    padded, outs, lses = [], [], []
    for n, start in enumerate(range(0, tk, size), 1):
        kc, vc = k[..., start : start + size, :], v[..., start : start + size, :]
        raw = q @ kc.transpose(-2, -1)
        scaled = raw / math.sqrt(D)
        m = scaled.amax(-1, keepdim=True)
        p = torch.exp(scaled - m)
        total = p.sum(-1, keepdim=True)
        out = p @ vc / total
        lse = m + total.log()
        outs.append(out)
        lses.append(lse)
        padded.append(torch.cat([scaled, scaled.new_full((B, H, TQ, size - kc.shape[-2]), float("-inf"))], -1))
        steps += [(f"k chunk {n}", kc), (f"v chunk {n}", vc), (f"scores, chunk {n}", raw), (f"scaled, chunk {n}", scaled),
                  (f"max, chunk {n}", m), (f"scaled - max, chunk {n}", scaled - m), (f"p, chunk {n}", p),
                  (f"sum of p, chunk {n}", total), (f"p·v, chunk {n}", p @ vc), (f"partial output, chunk {n}", out),
                  (f"log(sum), chunk {n}", total.log()), (f"log-sum-exp, chunk {n}", lse)]  # fmt: skip
        zh |= {f"k chunk {n}": f"第 {n} 块的 k", f"v chunk {n}": f"第 {n} 块的 v", f"scores, chunk {n}": f"第 {n} 块的 scores",
               f"scaled, chunk {n}": f"第 {n} 块的 scaled", f"max, chunk {n}": f"第 {n} 块的最大值",
               f"scaled - max, chunk {n}": f"第 {n} 块的 scaled - max", f"p, chunk {n}": f"第 {n} 块的 p",
               f"sum of p, chunk {n}": f"第 {n} 块的 p 之和", f"p·v, chunk {n}": f"第 {n} 块的 p·v",
               f"partial output, chunk {n}": f"第 {n} 块的部分输出", f"log(sum), chunk {n}": f"第 {n} 块的 log(sum)",
               f"log-sum-exp, chunk {n}": f"第 {n} 块的 log-sum-exp"}  # fmt: skip
    scores_all = torch.stack(padded)  # [n, B, H, Tq, chunk]
    lse_all, out_all = torch.stack(lses), torch.stack(outs)  # [n, B, H, Tq, 1], [n, B, H, Tq, Dv]
    top = lse_all.amax(0)
    weights = torch.exp(lse_all - top)
    full = top + weights.sum(0).log()
    merged = weights / weights.sum(0)
    steps += [("scaled scores of every chunk (padded with -inf)", scores_all),
              ("p of every chunk, normalised in the chunk", torch.exp(scores_all - lse_all)),
              ("log-sum-exps of the chunks", lse_all), ("partial outputs of the chunks", out_all), ("max log-sum-exp", top),
              ("log-sum-exp - max", lse_all - top), ("merge weights (unnormalised)", weights),
              ("weighted partials", weights * out_all), ("sum of weighted partials", (weights * out_all).sum(0)),
              ("sum of merge weights", weights.sum(0)), ("log-sum-exp of all keys", full),
              ("log merge weights", lse_all - full), ("merge weights", merged), ("normalised weighted partials", merged * out_all),
              ("output", (merged * out_all).sum(0))]  # fmt: skip
    zh |= {"scaled scores of every chunk (padded with -inf)": "各块缩放后的 scores（以 -inf 补齐）",
           "p of every chunk, normalised in the chunk": "各块的 p（块内归一化）", "log-sum-exps of the chunks": "各块的 log-sum-exp",
           "partial outputs of the chunks": "各块的部分输出", "max log-sum-exp": "log-sum-exp 的最大值",
           "merge weights (unnormalised)": "合并权重（未归一化）", "weighted partials": "加权后的部分输出",
           "sum of weighted partials": "加权部分输出之和", "sum of merge weights": "合并权重之和",
           "log-sum-exp of all keys": "全部 key 的 log-sum-exp", "log merge weights": "合并权重的对数", "merge weights": "合并权重",
           "normalised weighted partials": "归一化后的加权部分输出"}  # fmt: skip
    return Case(ctx.entry, (q, k, v, n_splits), steps, factors=scale_factors(D), unit=PAIRS, zh=zh,
                label=LARGE_SCORES if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: exp of a chunk's log-sum-exp, not shifted by the max of
    them, overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
