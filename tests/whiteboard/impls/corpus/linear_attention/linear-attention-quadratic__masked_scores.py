import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    a = fq @ fk.transpose(-2, -1)
    if causal:
        a = torch.tril(a)
    return (a @ v) / (a.sum(-1, keepdim=True) + eps)
