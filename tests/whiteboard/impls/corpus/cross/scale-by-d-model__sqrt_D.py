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

    def _heads(self, t):
        B, L, D = t.shape
        return t.view(B, L, self.n_heads, D // self.n_heads).transpose(1, 2)

    def forward(self, x, context, context_mask=None):
        B, Tq, D = x.shape
        q = self._heads(self.q_proj(x))
        k = self._heads(self.k_proj(context))
        v = self._heads(self.v_proj(context))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        if context_mask is not None:
            scores = scores.masked_fill(~context_mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, Tq, D))
