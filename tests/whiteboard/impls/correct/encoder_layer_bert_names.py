import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)

    def forward(self, x, additive):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (f(x).view(B, T, self.n_heads, hd).permute(0, 2, 1, 3) for f in (self.query, self.key, self.value))
        probs = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd) + additive, dim=-1)
        return torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, T, d)


class AddNorm(nn.Module):
    def __init__(self, d_in, d_model, eps):
        super().__init__()
        self.dense = nn.Linear(d_in, d_model)
        self.LayerNorm = nn.LayerNorm(d_model, eps=eps)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class Attention(nn.Module):
    def __init__(self, d_model, n_heads, eps):
        super().__init__()
        self.self = SelfAttention(d_model, n_heads)
        self.output = AddNorm(d_model, d_model, eps)

    def forward(self, x, additive):
        return self.output(self.self(x, additive), x)


class Intermediate(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.dense = nn.Linear(d_model, ffn_dim)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.dense(x))


class EncoderLayer(nn.Module):
    """Hugging Face BertLayer's module tree, written out, with its additive finfo.min mask."""

    def __init__(self, d_model, n_heads, ffn_dim, eps=1e-12):
        super().__init__()
        self.attention = Attention(d_model, n_heads, eps)
        self.intermediate = Intermediate(d_model, ffn_dim)
        self.output = AddNorm(ffn_dim, d_model, eps)

    def forward(self, x, key_padding_mask):
        additive = (~key_padding_mask)[:, None, None, :].to(x.dtype) * torch.finfo(x.dtype).min
        h = self.attention(x, additive)
        return self.output(self.intermediate(h), h)
