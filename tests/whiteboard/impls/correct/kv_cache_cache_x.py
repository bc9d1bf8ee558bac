import torch
from torch import nn


class KVCacheAttention(nn.Module):
    """Caches the un-projected inputs (also correct, just recomputes k and v each step)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        past = x if cache is None else torch.cat([cache, x], dim=1)
        S = past.shape[1]
        heads = lambda t, n: t.reshape(B, n, self.h, D // self.h).transpose(1, 2)
        q = heads(self.q_proj(x), T)
        k, v = heads(self.k_proj(past), S), heads(self.v_proj(past), S)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * (D // self.h) ** -0.5
        q_pos = torch.arange(S - T, S, device=x.device)[:, None]
        k_pos = torch.arange(S, device=x.device)[None, :]
        scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
        y = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(dim=-1), v)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, D)), past
