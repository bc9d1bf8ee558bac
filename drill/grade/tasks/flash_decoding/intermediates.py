"""What ``drill grade --trace`` compares the user's split_kv_attention against: per chunk of keys, the scores,
the chunk's max, p, its sum, the partial output normalised inside the chunk and its log-sum-exp; then the
merge (the stacked log-sum-exps and partials, their max, the merge weights, the weighted sum). The
all-chunks-at-once layout (keys padded to whole chunks, padded scores at -inf) is named too."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import LARGE_PEAK, LARGE_SCORES, scale_factors
from drill.text.messages import Ev

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
    steps = [("q", q), ("k", k), ("v", v)]
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
        steps += [(Ev("k chunk {n}", n=n), kc), (Ev("v chunk {n}", n=n), vc), (Ev("scores, chunk {n}", n=n), raw),
                  (Ev("scaled, chunk {n}", n=n), scaled), (Ev("max, chunk {n}", n=n), m),
                  (Ev("scaled - max, chunk {n}", n=n), scaled - m), (Ev("p, chunk {n}", n=n), p),
                  (Ev("sum of p, chunk {n}", n=n), total), (Ev("p·v, chunk {n}", n=n), p @ vc),
                  (Ev("partial output, chunk {n}", n=n), out), (Ev("log(sum), chunk {n}", n=n), total.log()),
                  (Ev("log-sum-exp, chunk {n}", n=n), lse)]  # fmt: skip
    scores_all = torch.stack(padded)  # [n, B, H, Tq, chunk]
    lse_all, out_all = torch.stack(lses), torch.stack(outs)  # [n, B, H, Tq, 1], [n, B, H, Tq, Dv]
    top = lse_all.amax(0)
    weights = torch.exp(lse_all - top)
    full = top + weights.sum(0).log()
    merged = weights / weights.sum(0)
    steps += [(Ev("scaled scores of every chunk (padded with -inf)"), scores_all),
              (Ev("p of every chunk, normalised in the chunk"), torch.exp(scores_all - lse_all)),
              (Ev("log-sum-exps of the chunks"), lse_all), (Ev("partial outputs of the chunks"), out_all),
              (Ev("max log-sum-exp"), top), ("log-sum-exp - max", lse_all - top), (Ev("merge weights (unnormalised)"), weights),
              (Ev("weighted partials"), weights * out_all), (Ev("sum of weighted partials"), (weights * out_all).sum(0)),
              (Ev("sum of merge weights"), weights.sum(0)), (Ev("log-sum-exp of all keys"), full),
              (Ev("log merge weights"), lse_all - full), (Ev("merge weights"), merged),
              (Ev("normalised weighted partials"), merged * out_all), ("output", (merged * out_all).sum(0))]  # fmt: skip
    return Case(ctx.entry, (q, k, v, n_splits), steps, factors=scale_factors(D), unit=PAIRS,
                label=LARGE_SCORES if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Scores around 1e3 when the large-logits check failed: exp of a chunk's log-sum-exp, not shifted by the max of
    them, overflows there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
