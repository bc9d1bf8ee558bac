"""A module whose plain attribute is 10**400: drill reads a module's scalar attributes to describe it."""
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = 10**400
        self.W_q = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        return self.W_q(x) * self.n_heads
