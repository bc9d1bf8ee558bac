"""What ``drill grade --trace`` compares the user's LlamaBlock against (its own weights): the first RMSNorm,
q, k, v, q and k after RoPE, the repeated kv heads, causal attention step by step, the residual stream, the
second RMSNorm, SwiGLU's gate, up and product, and the output."""

from __future__ import annotations

import torch

from drill.grade.tasks.llama_block.task import build, reference
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import NoTrace, scale_factors

B, T, H, KV, HD = 2, 5, 4, 2, 4  # d_model 16, ffn_dim 24


def case(ctx) -> Case:
    built = build(ctx, (H, KV, HD), torch.float64)
    if built.names is None:
        raise NoTrace("no recognised LlamaBlock layout")
    x = torch.randn(B, T, H * HD, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    steps: list = [("x", x)]
    out = reference(built, x, torch.float64, steps=steps)
    steps.append(("output", out))
    return Case(built.module, (x,), steps, factors=scale_factors(HD, H * HD), unit=PAIRS)
