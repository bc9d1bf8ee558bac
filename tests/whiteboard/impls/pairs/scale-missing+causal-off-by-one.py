import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.register_buffer("bias", torch.tril(torch.ones(max_seq_len, max_seq_len), diagonal=1))

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_heads
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        q = q.view(B, T, self.n_heads, hs).transpose(1, 2)
        k = k.view(B, T, self.n_heads, hs).transpose(1, 2)
        v = v.view(B, T, self.n_heads, hs).transpose(1, 2)
        att = q @ k.transpose(-2, -1)
        att = att.masked_fill(self.bias[:T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
