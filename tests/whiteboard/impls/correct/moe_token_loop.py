import torch
from torch import nn


class MoE(nn.Module):
    """Token by token and slot by slot, the way the routing is usually explained; GELU MLP experts."""

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)
        )

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        logits = self.router(flat)
        rows = []
        for t in range(flat.shape[0]):
            vals, ids = logits[t].topk(self.top_k)
            w = torch.softmax(vals, dim=0)
            rows.append(sum(w[s] * self.experts[int(ids[s])](flat[t]) for s in range(self.top_k)))
        y = torch.stack(rows).reshape(x.shape)
        probs = torch.softmax(logits, dim=-1)
        top1 = logits.argmax(dim=-1)
        f = torch.stack([(top1 == i).to(x.dtype).mean() for i in range(self.n_experts)])
        return y, self.n_experts * (f * probs.mean(dim=0)).sum()
