"""What ``drill grade --trace`` compares the user's EncoderLayer against (its own weights): attention step by
step with the key-padding mask, the residual sum and its LayerNorm, the FFN's hidden and activated layers,
the second residual sum and the final LayerNorm."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from drill.grade.reference import merge_heads, split_heads
from drill.grade.tasks.encoder_layer.task import build, padding
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, scale_factors
from drill.text.messages import Ev

B, T, H, HD = 2, 5, 3, 4  # d_model 12, ffn_dim 20


def case(ctx) -> Case:
    built = build(ctx, H * HD, H, torch.float64)
    lay = built.layout
    if lay is None:
        raise NoTrace("no recognised encoder layer layout")
    x = torch.randn(B, T, H * HD, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    mask = padding([T, 3], T)
    p = built.params(torch.float64)

    def linear(z, name):
        return F.linear(z, p[f"{name}.weight"], p.get(f"{name}.bias"))

    def ln(z, name):
        return F.layer_norm(z, z.shape[-1:], p[f"{name}.weight"], p[f"{name}.bias"], built.eps(name))

    q, k, v = (split_heads(t, H, HD) for t in lay.attn.project_qkv(x, p))
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~mask[:, None, None, :], float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    attn_out = lay.attn.project_out(merged, p)
    sum1 = x + attn_out
    normed1 = ln(sum1, lay.ln1)
    hidden = linear(normed1, lay.fc1)
    activated = F.gelu(hidden)
    ffn_out = linear(activated, lay.fc2)
    sum2 = normed1 + ffn_out
    steps = [("x", x), ("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled), ("masked", masked),
             ("weights", weights), ("weights·v", attended), (Ev("merged heads"), merged), (Ev("attention output"), attn_out),
             (Ev("x + attention"), sum1), (Ev("norm1(x + attention)"), normed1), (Ev("ffn hidden"), hidden),
             (Ev("gelu(hidden)"), activated), (Ev("ffn output"), ffn_out), (Ev("x + ffn"), sum2), ("output", ln(sum2, lay.ln2))]  # fmt: skip
    return Case(built.module, (x, mask), steps, factors=scale_factors(HD, H * HD), unit=PAIRS)
