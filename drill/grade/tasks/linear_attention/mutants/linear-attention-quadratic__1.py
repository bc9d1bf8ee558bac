import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    q, k = F.elu(q) + 1, F.elu(k) + 1
    weights = q @ k.transpose(-2, -1)  # [..., T, T]: the quadratic route
    if causal:
        t = q.shape[-2]
        weights = weights * torch.tril(torch.ones(t, t, dtype=q.dtype, device=q.device))
    return weights @ v / (weights.sum(dim=-1, keepdim=True) + eps)
