import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    """A SwiGLU expert, as Mixtral's (w1, w3 -> w2)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Hugging Face's names (gate, experts); every expert on every token, the top-k scattered into a sparse
    [N, E] weight matrix (zero off the top-k), so unchosen experts contribute exactly 0."""

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(n_experts))

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        logits = self.gate(tokens)
        top, idx = torch.topk(logits, self.top_k, dim=-1)
        dense = torch.zeros_like(logits).scatter(-1, idx, torch.softmax(top, dim=-1))  # [N, E]
        outs = torch.stack([e(tokens) for e in self.experts], dim=1)  # [N, E, d]
        y = torch.einsum("ne,ned->nd", dense, outs)
        n_experts = logits.shape[-1]
        counts = torch.bincount(logits.argmax(dim=-1), minlength=n_experts).to(tokens.dtype)
        aux = n_experts * torch.dot(counts / tokens.shape[0], torch.softmax(logits, dim=-1).mean(dim=0))
        return y.reshape(x.shape), aux
