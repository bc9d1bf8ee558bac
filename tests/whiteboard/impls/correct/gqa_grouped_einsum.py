import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    """No copies of K/V: the query heads are viewed as [n_kv_heads, group]."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.h, self.kv = n_heads, n_kv_heads
        self.hd = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.hd)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.hd)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, d = x.shape
        g = self.h // self.kv
        q = self.W_q(x).view(B, T, self.kv, g, self.hd)
        k = self.W_k(x).view(B, T, self.kv, self.hd)
        v = self.W_v(x).view(B, T, self.kv, self.hd)
        scores = torch.einsum("bqngd,bknd->bngqk", q, k) * self.hd**-0.5
        if mask is not None:
            m = mask.expand(B, self.h, T, T).reshape(B, self.kv, g, T, T)
            scores = scores.masked_fill(~m, float("-inf"))
        out = torch.einsum("bngqk,bknd->bqngd", scores.softmax(dim=-1), v)
        return self.W_o(out.reshape(B, T, d))
