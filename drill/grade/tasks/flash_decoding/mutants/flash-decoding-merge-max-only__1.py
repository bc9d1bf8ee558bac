import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose."""
    chunk = math.ceil(k.shape[-2] / n_splits)
    outs, maxes = [], []
    for start in range(0, k.shape[-2], chunk):
        s = q @ k[..., start:start + chunk, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        m = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - m)
        outs.append(p @ v[..., start:start + chunk, :] / p.sum(dim=-1, keepdim=True))
        maxes.append(m)
    m = torch.stack(maxes)
    w = torch.exp(m - m.amax(dim=0))
    return (w * torch.stack(outs)).sum(dim=0) / w.sum(dim=0)
