import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, d = x.shape
        hd = d // self.n_heads

        def heads(t):
            return t.view(B, T, self.n_heads, hd).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=0)
        scores = scores.masked_fill(future, -1e9)
        scores = scores - scores.max(dim=-1, keepdim=True).values
        weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
        return self.o_proj((weights @ v).transpose(1, 2).reshape(B, T, d))
