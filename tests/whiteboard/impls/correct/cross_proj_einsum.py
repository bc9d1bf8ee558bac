import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, context, context_mask=None):
        B, Tq, d = x.shape
        hd = d // self.h
        q = self.q_proj(x).unflatten(-1, (self.h, hd))
        k = self.k_proj(context).unflatten(-1, (self.h, hd))
        v = self.v_proj(context).unflatten(-1, (self.h, hd))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * hd**-0.5
        if context_mask is not None:
            scores = scores.masked_fill(context_mask.logical_not(), float("-inf"))
        scores = scores - scores.amax(dim=-1, keepdim=True)
        weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
        return self.out_proj(torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, Tq, d))
