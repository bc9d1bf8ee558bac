import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    """Multi-head cross-attention: queries from x, keys and values from context.

    __init__(d_model, n_heads): Linear layers q_proj, k_proj, v_proj, o_proj.
    forward(x, context, context_mask=None): x [B, Tq, d_model], context [B, Tk, d_model],
    context_mask bool, broadcastable to [B, n_heads, Tq, Tk] — e.g. [B, 1, 1, Tk] for padded
    context (True = may attend); returns [B, Tq, d_model].
    """

    def __init__(self, d_model, n_heads):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, context, context_mask=None):
        raise NotImplementedError
