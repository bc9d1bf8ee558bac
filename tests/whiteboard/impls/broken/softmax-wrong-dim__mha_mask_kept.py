import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, d = x.shape
        hd = d // self.n_heads
        q = self.W_q(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = scores.softmax(dim=-2)
        return self.W_o((attn @ v).transpose(1, 2).reshape(B, T, d))
