import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q = F.elu(q)
    phi_k = F.elu(k)
    if causal:
        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(phi_k, dim=-2)
        num = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
        den = (phi_q * z).sum(dim=-1, keepdim=True)
    else:
        S = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ S
        den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
