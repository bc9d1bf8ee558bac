import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d_k = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.q_proj(x).reshape(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.k_proj(x).reshape(B, T, self.h, self.d_k).transpose(1, 2)
        v = self.v_proj(x).reshape(B, T, self.h, self.d_k).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.d_k**-0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        ctx = torch.matmul(F.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).view(B, T, self.h * self.d_k)  # merge the heads back
        return self.o_proj(ctx)
