import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Short names, as written on a whiteboard: q, k, v and out."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, self.h, self.dk).transpose(1, 2) for f in (self.q, self.k, self.v))
        s = q @ k.transpose(-2, -1) / self.dk**0.5
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        y = s.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, -1))
