import math

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
        B, n, D = x.shape
        hd = D // self.n_heads
        q = self.q_proj(x).view(B, n, self.n_heads, hd).transpose(1, 2)
        k = self.k_proj(x).view(B, n, self.n_heads, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, n, self.n_heads, hd).transpose(1, 2)
        if cache is not None:
            past_k, past_v = cache
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        P = k.shape[2] - n
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        qpos = torch.arange(n, device=x.device)[:, None]
        kpos = torch.arange(P + n, device=x.device)[None, :]
        scores = scores.masked_fill(kpos > qpos, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, n, D)), (k, v)
