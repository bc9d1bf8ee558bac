import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.dk = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.h, self.dk).permute(0, 2, 1, 3) for z in (q, k, v))
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = s.softmax(1)
        o = torch.einsum("bhqk,bhkd->bhqd", p, v)
        return self.out(o.permute(0, 2, 1, 3).reshape(b, t, -1))
