import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose."""
    chunk = math.ceil(k.shape[-2] / n_splits)
    num, den = 0, 0
    for start in range(0, k.shape[-2], chunk):
        s = q @ k[..., start:start + chunk, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        m = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - m)
        l = p.sum(dim=-1, keepdim=True)
        o = p @ v[..., start:start + chunk, :] / l
        lse = m + torch.log(l)
        num = num + torch.exp(lse) * o
        den = den + torch.exp(lse)
    return num / den
