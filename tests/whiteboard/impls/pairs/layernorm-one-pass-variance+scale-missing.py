import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = (x * x).mean(-1, keepdim=True) - m * m
        return self.weight * (x - m) / torch.sqrt(v + self.eps) + self.bias


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def attention(self, x):
        B, T, D = x.shape
        split = lambda t: t.view(B, T, self.n_heads, -1).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        scores = q @ k.transpose(-1, -2)  # no 1/sqrt(d_head)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        weights = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        return self.o_proj((weights @ v).transpose(1, 2).reshape(B, T, D))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
