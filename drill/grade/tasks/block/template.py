import math

import torch
from torch import nn


class TransformerBlock(nn.Module):
    """A pre-LayerNorm decoder block (GPT-2 style), causal.

    __init__(d_model, n_heads, d_ff): ln1, causal attention (fused qkv and out Linear layers), ln2,
    mlp = Linear(d_model, d_ff) -> GELU -> Linear(d_ff, d_model).
    forward(x): x = x + attn(ln1(x)); x = x + mlp(ln2(x)). x [B, T, d_model] -> [B, T, d_model].
    """

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError
