"""What ``drill grade --trace`` compares the user's attention_backward against (masked): the forward's scores,
scaled, masked, its row max and log-sum-exp, P recomputed, then dV = Pᵀ dO, dP = dO Vᵀ, the row sums Σ dP∘P (= Σ dO∘O, FlashAttention's
D), dS = P∘(dP - D), and dQ, dK (scaled). ``dS·k`` and ``dSᵀ·q`` unscaled are no step: a missing scale is named
where the gradient is made."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import fixed_mask, scale_factors
from drill.text.messages import Ev

B, H, TQ, TK, D, DV = 2, 3, 5, 7, 4, 6  # no two sizes equal, so a transposition cannot hide


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q, k, v, d_out = (torch.randn(B, H, t, d, generator=gen, dtype=torch.float64)
                      for t, d in ((TQ, D), (TK, D), (TK, DV), (TQ, DV)))  # fmt: skip
    mask = fixed_mask((B, 1, TQ, TK), gen)
    scale = 1 / math.sqrt(D)
    scores = q @ k.transpose(-2, -1)
    masked = (scores * scale).masked_fill(~mask, float("-inf"))
    p = torch.softmax(masked, -1)
    out = p @ v
    dp = d_out @ v.transpose(-2, -1)
    rows = (dp * p).sum(-1, keepdim=True)
    ds = p * (dp - rows)
    steps = [("q", q), ("k", k), ("v", v), ("d_out", d_out), ("scores", scores), ("scaled", scores * scale),
             ("masked", masked), (Ev("row max"), masked.amax(-1, keepdim=True)),
             ("log-sum-exp", torch.logsumexp(masked, -1, keepdim=True)), ("P", p), ("dV = Pᵀ·dO", p.transpose(-2, -1) @ d_out), ("dP = dO·Vᵀ", dp),
             ("dP∘P", dp * p), ("O = P·V", out), ("dO∘O", d_out * out), ("D = Σ dP∘P = Σ dO∘O", rows),
             ("dP - D", dp - rows), ("dS = P∘(dP - D)", ds), ("dS·scale", ds * scale), ("dQ", ds @ k * scale),
             ("dK", ds.transpose(-2, -1) @ q * scale)]  # fmt: skip
    return Case(
        ctx.entry,
        (q, k, v, d_out, mask),
        steps,
        output="dQ",
        returned=("dQ", "dK", "dV = Pᵀ·dO"),
        factors=scale_factors(D), unit=PAIRS,
    )
