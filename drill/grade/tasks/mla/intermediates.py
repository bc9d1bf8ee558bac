"""What ``drill grade --trace`` compares the user's MultiHeadLatentAttention against: the second call (a chunk of
5 tokens after 6 cached latents): the new latents c_kv = W_dkv x, the latent cache grown to 11, q, k = W_uk c and
v = W_uv c per head (or absorbed: q·W_uk, weights·c_kv), scores, scaled by 1/√head_dim, the
bottom-right mask, weights, weights·v, merged heads, output."""

from __future__ import annotations

import math

import torch

from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.mla.task import TASK, linear
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, scale_factors
from drill.text.messages import Ev

B, H, HD, CACHED, NEW = 2, 3, 4, 6, 5  # d_model 12, d_latent 7, 11 latents in all; no two sizes equal
LATENTS = Ev("c_kv cached + new")


def case(ctx) -> Case:
    built = TASK.build(ctx, H * HD, H, torch.float64)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, CACHED + NEW, H * HD, generator=gen, dtype=torch.float64)
    prefill, chunk = x[:, :CACHED].contiguous(), x[:, CACHED:].contiguous()
    ret = ctx.call(built.module, prefill, None)  # the first call, untraced: its cache is what the second one gets
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2):
        raise NoTrace("forward(x, cache) did not return (out, cache)")
    params = built.params(torch.float64)
    latents = built.layout.latent(x, params)
    k_up, v_up = built.layout.up(latents, params)
    q, k, v = (split_heads(t, H, HD) for t in (linear(chunk, params, "W_q"), k_up, v_up))
    w_uk = params["W_uk.weight"].reshape(H, HD, -1)  # [H, head_dim, d_latent]
    total = CACHED + NEW
    allowed = torch.ones(NEW, total, dtype=torch.bool).tril(diagonal=total - NEW)  # query i sees latents 0..6+i
    scores = q @ k.transpose(-2, -1)
    masked = (scores / math.sqrt(HD)).masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    steps = [(Ev("x (new chunk)"), chunk), (Ev("c_kv cached"), latents[:, :CACHED]), (Ev("c_kv new = W_dkv x"), latents[:, CACHED:]),
             (LATENTS, latents), ("q", q), ("k = W_uk c_kv", k), ("v = W_uv c_kv", v),  # shown as is: formulas
             (Ev("q·W_uk (absorbed into the latent)"), q @ w_uk), ("scores", scores), ("scaled", scores / math.sqrt(HD)),
             (Ev("masked (bottom-right)"), masked), ("weights", weights),
             (Ev("weights·c_kv (absorbed)"), weights @ latents[:, None]), ("weights·v", attended), (Ev("merged heads"), merged),
             ("output", built.layout.project_out(merged, params))]  # fmt: skip
    return Case(built.module, (chunk, ret[1]), steps, factors=scale_factors(HD, H * HD), unit=PAIRS, returned=(LATENTS,))
