import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention.

    __init__(d_model, n_heads): projections named W_q, W_k, W_v, W_o (or q_proj/k_proj/v_proj/o_proj,
    or one fused Linear(d_model, 3*d_model) named qkv plus an output Linear named out).
    forward(x, mask=None): x [B, T, d_model]; mask bool broadcastable to [B, H, T, T], True = may attend
    returns [B, T, d_model]; head_dim = d_model // n_heads.
    """

    def __init__(self, d_model, n_heads):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, mask=None):
        raise NotImplementedError
