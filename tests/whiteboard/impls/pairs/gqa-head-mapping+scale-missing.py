import torch
import torch.nn.functional as F
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv = n_kv_heads
        self.hd = d_model // n_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.hd)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.hd)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.hd)
        self.o_proj = nn.Linear(n_heads * self.hd, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        rep = self.n_heads // self.n_kv
        q = self.q_proj(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2).repeat(1, rep, 1, 1)
        v = self.v_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2).repeat(1, rep, 1, 1)
        att = q @ k.transpose(-1, -2)
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        out = F.softmax(att, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, -1))
