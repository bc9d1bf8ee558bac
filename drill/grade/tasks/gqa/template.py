import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    """Grouped-query self-attention: n_heads query heads share n_kv_heads key/value heads.

    __init__(d_model, n_heads, n_kv_heads): q_proj Linear(d_model, d_model),
    k_proj and v_proj Linear(d_model, n_kv_heads * head_dim), o_proj Linear(d_model, d_model).
    forward(x, mask=None): x [B, T, d_model]; mask bool broadcastable to [B, n_heads, T, T], True = may attend.
    Query head h uses key/value head h // (n_heads // n_kv_heads). Returns [B, T, d_model].
    """

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, mask=None):
        raise NotImplementedError
