import math

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - mean * mean
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln2 = LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

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
