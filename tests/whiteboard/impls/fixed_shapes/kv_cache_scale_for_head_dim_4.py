import torch
from torch import nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, n, d = x.shape
        hd = d // self.n_heads

        def heads(t):
            return t.view(B, n, self.n_heads, hd).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=-2), torch.cat([cache[1], v], dim=-2)
        total = k.size(-2)
        allowed = torch.ones(n, total, dtype=torch.bool, device=x.device).tril(diagonal=total - n)
        scores = (q @ k.transpose(-2, -1) * 0.5).masked_fill(~allowed, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, n, d)), (k, v)
