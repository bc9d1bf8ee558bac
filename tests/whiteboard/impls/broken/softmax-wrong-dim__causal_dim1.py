import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.register_buffer("bias", torch.tril(torch.ones(max_seq_len, max_seq_len)))

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_heads
        q = self.q_proj(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_heads, hd).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(hd)
        att = att.masked_fill(self.bias[:T, :T] == 0, -1e9)
        att = F.softmax(att, dim=1)
        y = att @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, T, C))
