import math

import torch
import torch.nn.functional as F
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, ffn_dim, eps=1e-12):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)

    def attn(self, x, key_padding_mask):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (p(x).view(B, T, self.n_heads, hd).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        scores = scores.masked_fill(~key_padding_mask[:, None, None, :], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, d))

    def forward(self, x, key_padding_mask):
        x = self.norm1(x + self.attn(x, key_padding_mask))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x), approximate="tanh")))
