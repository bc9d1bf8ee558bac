import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q = F.elu(q) + 1
    phi_k = F.elu(k) + 1
    if causal:
        kv = phi_k.unsqueeze(-1) * v.unsqueeze(-2)
        S = torch.cumsum(kv, dim=-3) - kv
        z = torch.cumsum(phi_k, dim=-2) - phi_k
        num = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
        den = (phi_q * z).sum(dim=-1, keepdim=True)
    else:
        S = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ S
        den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
