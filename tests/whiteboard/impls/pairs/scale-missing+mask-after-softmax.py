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
        scores = q @ k.transpose(-2, -1)  # BUG 1: no 1/sqrt(head_dim)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # BUG 2: masked after the softmax
        out = weights @ v
        return self.W_o(out.transpose(1, 2).contiguous().view(B, T, d))
