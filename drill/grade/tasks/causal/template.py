import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    """GPT-style masked multi-head self-attention: position i attends to 0..i only.

    __init__(d_model, n_heads, max_seq_len): a fused Linear(d_model, 3*d_model) named c_attn (split q, k, v)
    and an output Linear named c_proj (or separate q_proj/k_proj/v_proj/o_proj).
    forward(x): x [B, T, d_model] with T <= max_seq_len; returns [B, T, d_model].
    """

    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError
