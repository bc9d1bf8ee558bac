import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, context, context_mask=None):
        B = x.size(0)
        q = self.q_proj(x).view(B, -1, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(context).view(B, -1, self.h, self.dk).transpose(1, 2)
        v = self.v_proj(x).view(B, -1, self.h, self.dk).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if context_mask is not None:
            att = att.masked_fill(~context_mask, float("-inf"))
        out = att.softmax(-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, -1, self.h * self.dk))
