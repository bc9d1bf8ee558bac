import math

import torch
import torch.nn.functional as F
from torch import nn


def layer_norm(x, ln):
    mu = x.mean(dim=-1, keepdim=True)
    var = x.pow(2).mean(dim=-1, keepdim=True) - mu.pow(2)
    return ln.weight * (x - mu) * torch.rsqrt(var + ln.eps) + ln.bias


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.h = n_heads
        self.ln_1 = nn.LayerNorm(d_model)
        self.ln_2 = nn.LayerNorm(d_model)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(layer_norm(x, self.ln_1)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.fc2(F.gelu(self.fc1(layer_norm(x, self.ln_2))))
