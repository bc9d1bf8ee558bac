import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.d_k = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        s = q @ k.transpose(-2, -1) * self.d_k ** -0.5
        if mask is not None:
            s = s.masked_fill(mask, -1e9)
        o = torch.softmax(s, -1) @ v
        return self.out_proj(o.reshape(B, T, D))
