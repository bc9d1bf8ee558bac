import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose."""
    chunk = math.ceil(k.shape[-2] / n_splits)
    partials = []
    for start in range(0, k.shape[-2], chunk):
        s = q @ k[..., start:start + chunk, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        p = torch.softmax(s, dim=-1)
        partials.append(p @ v[..., start:start + chunk, :])
    return sum(partials) / len(partials)
