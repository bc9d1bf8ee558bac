import math

import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1, bias=True):
        super().__init__()
        self.n_heads, self.dropout = n_heads, dropout
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, C // self.n_heads).permute(2, 0, 3, 1, 4)
        att = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.dropout(att.softmax(dim=-1), p=self.dropout, training=self.training)
        return self.out((att @ v).transpose(1, 2).reshape(B, T, C))
