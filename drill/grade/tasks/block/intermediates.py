"""What ``drill grade --trace`` compares the user's TransformerBlock against (its own weights): the first
LayerNorm, causal attention step by step, the residual stream after attention, the second LayerNorm, the
FFN's hidden and activated layers, and the residual stream after the FFN."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from drill.grade.checks.module import self_attention_args
from drill.grade.reference import causal_mask, merge_heads, split_heads
from drill.grade.tasks.block.task import ACTIVATIONS, TASK
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, module_leaks, scale_factors
from drill.text.messages import Ev

B, T, H, HD = 2, 5, 3, 4  # d_model 12, d_ff 20: no two sizes equal


def case(ctx) -> Case:
    built = TASK.build(ctx, H * HD, H, torch.float64)
    layout = built.layout
    if layout is None:
        raise NoTrace("no recognised block layout")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, T, H * HD, generator=gen, dtype=torch.float64)
    params = built.params(torch.float64)
    prefix = layout.attn_prefix
    attn_params = {n[len(prefix) :]: p for n, p in params.items() if n.startswith(prefix)}

    def ln(z, name):
        eps = getattr(built.module.get_submodule(name), "eps", 1e-5)
        return F.layer_norm(z, z.shape[-1:], params[f"{name}.weight"], params[f"{name}.bias"], eps)

    normed = ln(x, layout.ln1)
    q, k, v = (split_heads(p, H, HD) for p in layout.attn_layout.project_qkv(normed, attn_params))
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(HD)
    masked = scaled.masked_fill(~causal_mask(T), float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    attn_out = layout.attn_layout.project_out(merged, attn_params)
    stream1 = x + attn_out
    normed2 = ln(stream1, layout.ln2)
    hidden = F.linear(normed2, params[f"{layout.fc1}.weight"], params.get(f"{layout.fc1}.bias"))
    activated = ACTIVATIONS[layout.activation](hidden)
    ffn_out = F.linear(activated, params[f"{layout.fc2}.weight"], params.get(f"{layout.fc2}.bias"))
    steps = [("x", x), ("ln1(x)", normed), ("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled),
             ("masked", masked), ("weights", weights), ("weights·v", attended), (Ev("merged heads"), merged),
             (Ev("attention output"), attn_out), (Ev("residual stream after attention"), stream1), (Ev("ln2(stream)"), normed2),
             (Ev("ffn hidden"), hidden), (Ev("ffn activated"), activated), (Ev("ffn output"), ffn_out),
             ("output", stream1 + ffn_out)]  # fmt: skip
    return Case(built.module, self_attention_args(ctx, x, None), steps, factors=scale_factors(HD, H * HD), unit=PAIRS)


def leaks(ctx, failed):
    return module_leaks(TASK, ctx, failed, mask_arg=False)
