import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.SiLU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)
        )

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        logits = self.router(x)  # [N, E]
        top_logits, top_idx = logits.topk(self.top_k, dim=-1)  # [N, k]
        weights = top_logits.exp() / top_logits.exp().sum(dim=-1, keepdim=True)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = (top_idx == e).nonzero(as_tuple=True)
            if token.numel():
                y.index_add_(0, token, weights[token, slot, None] * expert(x[token]))
        probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)  # no max subtracted
        f = F.one_hot(top_idx[:, 0], self.n_experts).to(x.dtype).mean(dim=0)  # top-1 fractions (no gradient)
        aux = self.n_experts * (f * probs.mean(dim=0)).sum()
        return y.reshape(shape), aux
