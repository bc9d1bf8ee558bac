import math

import torch
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    """Causal Multi-head Latent Attention (DeepSeek-V2, without the decoupled RoPE key), with a latent cache.

    __init__(d_model, n_heads, d_latent): nn.Linear layers (bias optional)
      W_q   d_model -> d_model      queries
      W_dkv d_model -> d_latent     the shared latent c_kv = W_dkv x
      W_uk  d_latent -> d_model     keys   k = W_uk c_kv
      W_uv  d_latent -> d_model     values v = W_uv c_kv
      W_o   d_model -> d_model      output
    forward(x, cache=None) -> (out, cache): x [B, n, d_model] are the next n tokens after the P cached ones;
    out [B, n, d_model]; head_dim = d_model // n_heads, scale 1/sqrt(head_dim); query i of the chunk
    attends to keys 0..P+i. The cache is the latent itself: a tensor c_kv [B, P + n, d_latent].
    """

    def __init__(self, d_model, n_heads, d_latent):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, cache=None):
        raise NotImplementedError
