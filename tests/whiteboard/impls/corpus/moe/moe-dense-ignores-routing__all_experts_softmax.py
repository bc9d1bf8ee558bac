import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.SiLU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)
        )

    def forward(self, x):
        logits = self.gate(x)
        probs = logits.softmax(-1)
        outs = torch.stack([e(x) for e in self.experts], dim=-2)
        y = (probs.unsqueeze(-1) * outs).sum(-2)
        flat = probs.reshape(-1, self.n_experts)
        f = F.one_hot(flat.argmax(-1), self.n_experts).float().mean(0)
        aux = self.n_experts * (f * flat.mean(0)).sum()
        return y, aux
