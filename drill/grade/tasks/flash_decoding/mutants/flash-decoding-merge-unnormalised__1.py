import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose."""
    chunk = math.ceil(k.shape[-2] / n_splits)
    outs, lses = [], []
    for start in range(0, k.shape[-2], chunk):
        s = q @ k[..., start:start + chunk, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        lses.append(torch.logsumexp(s, dim=-1, keepdim=True))
        outs.append(torch.softmax(s, dim=-1) @ v[..., start:start + chunk, :])
    lse = torch.stack(lses)
    return (torch.exp(lse - lse.amax(dim=0)) * torch.stack(outs)).sum(dim=0)
