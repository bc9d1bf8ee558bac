import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    q, k = F.elu(q) + 1, F.elu(k) + 1
    if causal:
        state = torch.einsum("...td,...te->...tde", k, v).cumsum(dim=2)  # S_i: [B, H, T, D, Dv]
        z = k.cumsum(dim=2)  # z_i: [B, H, T, D]
        num = torch.einsum("...td,...tde->...te", q, state)
        den = (q * z).sum(dim=-1, keepdim=True)
    else:
        num = q @ (k.transpose(-2, -1) @ v)  # [D, Dv] state first: O(T D Dv)
        den = q @ k.sum(dim=2).unsqueeze(-1)
    return num / (den + eps)
