"""What ``drill grade --trace`` compares the user's paged_attention against: per sequence, the keys and values
gathered through its block table, the scores, scaled, the weights and its output; for the all-at-once layout,
the scores over every table slot with the slots past the context at -inf, the weights, the values with those
slots zeroed. Slots past a context and unused blocks hold NaN, as garbage may."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import scale_factors
from drill.text.messages import Ev

B, H, D, BLOCK, N_BLOCKS = 2, 4, 6, 5, 9
TABLE, LENS = [[7, 2, 0], [4, 0, 8]], [8, 13]  # 2 and 3 blocks used of 3; no two sizes equal (padded T = 15)


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(B, H, D, generator=gen, dtype=torch.float64)
    k_cache, v_cache = (torch.full((N_BLOCKS, BLOCK, H, D), float("nan"), dtype=torch.float64) for _ in range(2))
    table, lens = torch.tensor(TABLE, dtype=torch.int32), torch.tensor(LENS, dtype=torch.int32)
    for b, n in enumerate(LENS):
        t = torch.arange(n)
        for cache in (k_cache, v_cache):
            cache[table[b, t // BLOCK].long(), t % BLOCK] = torch.randn(n, H, D, generator=gen, dtype=torch.float64)
    steps, outs = [("q", q), ("k_cache", k_cache), ("v_cache", v_cache)], []
    for b, n in enumerate(LENS):
        t = torch.arange(n)
        keys, values = k_cache[table[b, t // BLOCK].long(), t % BLOCK], v_cache[table[b, t // BLOCK].long(), t % BLOCK]
        scores = torch.einsum("hd,lhd->hl", q[b], keys)
        weights = torch.softmax(scores / math.sqrt(D), -1)
        outs.append(torch.einsum("hl,lhd->hd", weights, values))
        steps += [(Ev("keys of sequence {b}", b=b), keys), (Ev("values of sequence {b}", b=b), values),
                  (Ev("scores of sequence {b}", b=b), scores), (Ev("scaled, sequence {b}", b=b), scores / math.sqrt(D)),
                  (Ev("weights of sequence {b}", b=b), weights), (Ev("output of sequence {b}", b=b), outs[-1])]  # fmt: skip
    pad = len(TABLE[0]) * BLOCK
    valid = torch.arange(pad)[None, :] < lens[:, None]  # [B, T]
    full_values = torch.where(valid[:, :, None, None], v_cache[table.long()].reshape(B, pad, H, D), 0.0)
    scaled = torch.full((B, H, pad), float("-inf"), dtype=torch.float64)
    for b, n in enumerate(LENS):
        scaled[b, :, :n] = steps[3 + 6 * b + 3][1]
    steps += [(Ev("scaled scores of every slot (past the context: -inf)"), scaled),
              (Ev("weights of every slot"), torch.softmax(scaled, -1)),
              (Ev("values of every slot (past the context: 0)"), full_values), ("output", torch.stack(outs))]  # fmt: skip
    return Case(ctx.entry, (q, k_cache, v_cache, table, lens), steps, factors=scale_factors(D), unit=PAIRS)
