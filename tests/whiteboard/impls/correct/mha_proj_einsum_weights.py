import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        B, T, d = x.shape
        q, k, v = (p(x).reshape(B, T, self.h, d // self.h) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.h) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(scores.softmax(-1))
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, d)
        return self.out_proj(out), weights
