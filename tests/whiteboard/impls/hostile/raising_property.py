"""An nn.Module whose property (one drill reads to describe a module) raises."""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    @property
    def eps(self):
        raise RuntimeError("eps is not for you")

    def forward(self, x, mask=None):
        return self.out(x)
