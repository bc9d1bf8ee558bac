import math
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.proj = nn.ModuleDict({"q": nn.Linear(d_model, d_model), "k": nn.Linear(d_model, d_model),
                                   "v": nn.Linear(d_model, d_model), "o": nn.Linear(d_model, d_model)})
        self.W_q, self.W_k, self.W_v, self.W_o = (self.proj[n] for n in "qkvo")

    def forward(self, x, mask=None):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (self.proj[n](x).view(B, T, self.n_heads, hd).transpose(1, 2) for n in "qkv")
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.proj["o"](out.transpose(1, 2).contiguous().view(B, T, d))
