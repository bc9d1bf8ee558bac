import torch
from torch import nn


class MoE(nn.Module):
    """Top-k routing is right; the balance loss is computed under no_grad, as a logging metric would be."""

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.k = top_k
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(d_model, d_ff), nn.SiLU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)]
        )

    def forward(self, x):
        tokens = x.view(-1, x.size(-1))
        scores = self.gate(tokens)
        vals, idx = torch.topk(scores, self.k, dim=-1)
        gates = torch.softmax(vals, dim=-1)
        out = torch.zeros_like(tokens)
        for j in range(self.k):
            for e, expert in enumerate(self.experts):
                rows = idx[:, j] == e
                if rows.any():
                    out[rows] += gates[rows, j : j + 1] * expert(tokens[rows])
        with torch.no_grad():
            n = len(self.experts)
            frac = torch.bincount(idx[:, 0], minlength=n).to(tokens.dtype) / tokens.size(0)
            prob = torch.softmax(scores, dim=-1).mean(dim=0)
            aux = n * torch.dot(frac, prob)
        return out.view_as(x), aux
