import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    """Separate projections; the tril buffer is registered but the scores are never masked with it."""

    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.h = n_heads
        self.d_k = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.register_buffer("tril", torch.tril(torch.ones(max_seq_len, max_seq_len, dtype=torch.bool)))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (p(x).view(b, t, self.h, self.d_k).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        weights = F.softmax(q @ k.transpose(-1, -2) / self.d_k**0.5, dim=-1)
        return self.o_proj((weights @ v).transpose(1, 2).reshape(b, t, -1))
