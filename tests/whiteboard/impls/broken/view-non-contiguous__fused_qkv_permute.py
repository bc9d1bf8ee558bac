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
        hd = C // self.n_heads
        qkv = self.qkv(x).view(B, T, 3, self.n_heads, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q.view(B * self.n_heads, T, hd)
        k = k.view(B * self.n_heads, T, hd)
        v = v.view(B * self.n_heads, T, hd)
        att = q @ k.transpose(1, 2) / math.sqrt(hd)
        if mask is not None:
            att = att.view(B, self.n_heads, T, T).masked_fill(~mask, float("-inf")).view(B * self.n_heads, T, T)
        y = att.softmax(dim=-1) @ v
        return self.out(y.view(B, self.n_heads, T, hd).transpose(1, 2).reshape(B, T, C))
