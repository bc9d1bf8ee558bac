import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_heads
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = [t.view(B, T, self.n_heads, hs).transpose(1, 2) for t in (q, k, v)]
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hs), dim=-1)
        att = att * torch.tril(torch.ones(T, T, device=x.device))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
