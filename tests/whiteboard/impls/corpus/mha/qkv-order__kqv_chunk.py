import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        H = self.n_heads
        k, q, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(B, T, H, C // H).permute(0, 2, 1, 3)
        k = k.reshape(B, T, H, C // H).permute(0, 2, 1, 3)
        v = v.reshape(B, T, H, C // H).permute(0, 2, 1, 3)
        att = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(C // H)
        if mask is not None:
            att = att + (~mask).float() * -1e9
        att = att.softmax(-1)
        y = torch.einsum("bhqk,bhkd->bhqd", att, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, C)
        return self.out(y)
