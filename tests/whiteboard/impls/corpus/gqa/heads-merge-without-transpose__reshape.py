import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv = n_heads, n_kv_heads
        self.hd = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.hd)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.hd)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        rep = self.n_heads // self.n_kv
        k = k[:, :, None].expand(B, self.n_kv, rep, T, self.hd).reshape(B, self.n_heads, T, self.hd)
        v = v[:, :, None].expand(B, self.n_kv, rep, T, self.hd).reshape(B, self.n_heads, T, self.hd)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        return self.o_proj(o.reshape(B, T, D))
