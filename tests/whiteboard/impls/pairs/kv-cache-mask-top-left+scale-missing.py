import torch
from torch import nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.dk = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, n, _ = x.shape
        q = self.q_proj(x).reshape(B, n, self.h, self.dk).permute(0, 2, 1, 3)
        k = self.k_proj(x).reshape(B, n, self.h, self.dk).permute(0, 2, 1, 3)
        v = self.v_proj(x).reshape(B, n, self.h, self.dk).permute(0, 2, 1, 3)
        if cache is not None:
            past_k, past_v = cache
            k = torch.cat((past_k, k), dim=2)
            v = torch.cat((past_v, v), dim=2)
        L = k.shape[2]
        att = q @ k.transpose(2, 3)
        causal = torch.tril(torch.ones(n, L, device=x.device)).bool()
        att = att.masked_fill(~causal, float("-inf"))
        y = att.softmax(dim=-1) @ v
        y = y.permute(0, 2, 1, 3).reshape(B, n, self.h * self.dk)
        return self.o_proj(y), (k, v)
