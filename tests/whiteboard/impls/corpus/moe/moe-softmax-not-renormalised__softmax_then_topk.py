import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)
        )

    def forward(self, x):
        shape = x.shape
        h = x.reshape(-1, shape[-1])
        logits = self.router(h)
        weights, top_idx = F.softmax(logits, dim=-1).topk(self.top_k, dim=-1)
        y = torch.zeros_like(h)
        for e in range(self.n_experts):
            tok, slot = (top_idx == e).nonzero(as_tuple=True)
            if tok.numel():
                y.index_add_(0, tok, weights[tok, slot, None] * self.experts[e](h[tok]))
        probs = F.softmax(logits, dim=-1)
        f = F.one_hot(top_idx[:, 0], self.n_experts).float().mean(0)
        P = probs.mean(0)
        aux = self.n_experts * (f * P).sum()
        return y.reshape(shape), aux
