import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    """Router softmax upcast to float32 (as Hugging Face writes it), top-k probabilities kept as they are."""

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.num_experts, self.top_k = n_experts, top_k
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(d_model, d_ff), nn.SiLU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)]
        )

    def forward(self, hidden_states):
        shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, shape[-1])
        router_logits = self.gate(hidden_states)
        probs = F.softmax(router_logits, dim=-1, dtype=torch.float)
        routing_weights, selected = torch.topk(probs, self.top_k, dim=-1)
        routing_weights = routing_weights.to(hidden_states.dtype)
        out = torch.zeros_like(hidden_states)
        for i, expert in enumerate(self.experts):
            tok, slot = torch.where(selected == i)
            out.index_add_(0, tok, expert(hidden_states[tok]) * routing_weights[tok, slot, None])
        f = F.one_hot(selected[:, 0], self.num_experts).float().mean(0)
        aux = self.num_experts * (f * probs.mean(0)).sum()
        return out.reshape(shape), aux.to(hidden_states.dtype)
