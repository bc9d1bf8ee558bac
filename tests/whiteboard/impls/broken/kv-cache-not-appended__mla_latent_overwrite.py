import math

import torch
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, n_heads, d_latent):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_dkv = nn.Linear(d_model, d_latent)
        self.W_uk = nn.Linear(d_latent, d_model)
        self.W_uv = nn.Linear(d_latent, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, n, d = x.shape
        c_kv = self.W_dkv(x)  # [B, n, d_latent]: all a decode step has to keep
        if cache is not None:
            c_kv = torch.cat([cache, c_kv], dim=1)
        total = c_kv.size(1)

        def heads(t):
            return t.view(B, t.size(1), self.n_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.W_q(x)), heads(self.W_uk(c_kv)), heads(self.W_uv(c_kv))
        allowed = torch.ones(n, total, dtype=torch.bool, device=x.device).tril(diagonal=total - n)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)).masked_fill(~allowed, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, n, d)), c_kv[:, -n:]
