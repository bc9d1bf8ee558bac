import math

import torch


def split_kv_attention(q, k, v, n_splits):
    Tk = k.shape[-2]
    size = Tk // n_splits
    outs, lses = [], []
    for start in range(0, size * n_splits, size):
        s = q @ k[..., start:start + size, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        lse = torch.logsumexp(s, dim=-1)
        outs.append(torch.softmax(s, dim=-1) @ v[..., start:start + size, :])
        lses.append(lse)
    L = torch.stack(lses, dim=0)
    O = torch.stack(outs, dim=0)
    L_max = L.max(dim=0, keepdim=True).values
    w = torch.exp(L - L_max)
    w = w / w.sum(dim=0, keepdim=True)
    return (w.unsqueeze(-1) * O).sum(dim=0)
