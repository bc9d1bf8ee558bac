import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.nh = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        hd = D // self.nh
        q = self.q_proj(x).view(B, T, self.nh, hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.nh, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.nh, hd).transpose(1, 2)
        s = q @ k.transpose(-1, -2)
        i = torch.arange(T, device=x.device)
        allowed = i[None, :] <= i[:, None]
        s = torch.where(allowed, s, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return self.o_proj((p @ v).transpose(1, 2).reshape(B, T, D))
