import math

import torch
from torch import nn


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model))  # BUG: no activation between the two Linears

    def attn(self, x):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (t.view(B, T, self.n_heads, hd).transpose(1, 2) for t in self.qkv(x).split(d, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        out = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
        return self.out(out.transpose(1, 2).reshape(B, T, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))
