import torch
from torch import nn


class MoE(nn.Module):
    """Routing and combination computed in float32 whatever the input dtype, cast back at the end."""

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.k = top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)]
        )

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        logits = self.router(tokens).float()
        top_vals, top_ids = torch.topk(logits, self.k, dim=-1)
        gates = torch.softmax(top_vals, dim=-1)
        out = torch.zeros(tokens.shape, dtype=torch.float32, device=x.device)
        for e, expert in enumerate(self.experts):
            rows, slots = torch.nonzero(top_ids == e, as_tuple=True)
            if len(rows):
                out[rows] += gates[rows, slots].unsqueeze(-1) * expert(tokens[rows]).float()
        n = len(self.experts)
        frac = torch.bincount(top_ids[:, 0], minlength=n).float() / tokens.shape[0]
        prob = torch.softmax(logits, dim=-1).mean(0)
        aux = n * torch.dot(frac, prob)
        return out.to(x.dtype).reshape(x.shape), aux.to(x.dtype)
