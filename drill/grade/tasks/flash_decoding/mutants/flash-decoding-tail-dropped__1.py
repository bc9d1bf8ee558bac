import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose."""
    chunk = math.ceil(k.shape[-2] / n_splits)
    outs, lses = [], []
    for c in range(k.shape[-2] // chunk):
        kc, vc = k[..., c * chunk:(c + 1) * chunk, :], v[..., c * chunk:(c + 1) * chunk, :]
        s = q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1])
        lses.append(torch.logsumexp(s, dim=-1, keepdim=True))
        outs.append(torch.softmax(s, dim=-1) @ vc)
    lse = torch.stack(lses)
    w = torch.softmax(lse, dim=0)
    return (w * torch.stack(outs)).sum(dim=0)
