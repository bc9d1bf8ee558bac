import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_layers):  # BUG: a third required argument the contract never passes
        super().__init__()
        self.n_heads, self.n_layers = n_heads, n_layers
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (w(x).view(B, T, self.n_heads, hd).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return self.W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, d))
