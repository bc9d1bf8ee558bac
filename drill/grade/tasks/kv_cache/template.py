import math

import torch
from torch import nn


class KVCacheAttention(nn.Module):
    """Causal multi-head self-attention that can decode incrementally with a key/value cache.

    __init__(d_model, n_heads): q_proj, k_proj, v_proj, o_proj Linear(d_model, d_model)
    (or a fused qkv plus out, as in the mha task).
    forward(x, cache=None) -> (out, cache): x [B, n, d_model] are the next n tokens after the P
    cached ones; out [B, n, d_model]. Query i of the chunk attends to keys 0..P+i. The cache is
    yours to shape (e.g. a (k, v) tuple of [B, H, P+n, head_dim]); the caller passes back what you returned.
    """

    def __init__(self, d_model, n_heads):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, cache=None):
        raise NotImplementedError
