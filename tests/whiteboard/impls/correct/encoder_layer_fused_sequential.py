import math

import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, ffn_dim, eps=1e-12):
        super().__init__()
        self.h = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model, eps=eps)
        self.ffn = nn.Sequential(nn.Linear(d_model, ffn_dim), nn.GELU(), nn.Linear(ffn_dim, d_model))
        self.ln2 = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, key_padding_mask):
        B, T, d = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d // self.h)
        scores = torch.where(key_padding_mask[:, None, None, :], scores, float("-inf"))
        a = torch.einsum("bhqk,bhkd->bqhd", scores.softmax(-1), v).reshape(B, T, d)
        x = self.ln1(x + self.out(a))
        return self.ln2(x + self.ffn(x))
