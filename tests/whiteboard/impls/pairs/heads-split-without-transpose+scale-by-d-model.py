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
        q = self.W_q(x).view(B, self.n_heads, T, hd)  # BUG 1: heads split without the transpose
        k = self.W_k(x).view(B, self.n_heads, T, hd)
        v = self.W_v(x).view(B, self.n_heads, T, hd)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # BUG 2: scaled by d_model
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).contiguous().view(B, T, d))
