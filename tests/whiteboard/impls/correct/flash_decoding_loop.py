import math

import torch


def split_kv_attention(q, k, v, n_splits):
    chunk = -(-k.size(-2) // n_splits)  # ceil(Tk / n_splits)
    outs, lses = [], []
    for start in range(0, k.size(-2), chunk):
        scores = q @ k[..., start : start + chunk, :].transpose(-2, -1) / math.sqrt(q.size(-1))
        m = scores.amax(dim=-1, keepdim=True)
        p = torch.exp(scores - m)
        total = p.sum(dim=-1, keepdim=True)
        outs.append(p @ v[..., start : start + chunk, :] / total)  # normalised inside the chunk
        lses.append(m + torch.log(total))  # the chunk's log-sum-exp, [..., Tq, 1]
    lse = torch.stack(lses)  # [n, ..., Tq, 1]
    weights = torch.exp(lse - lse.amax(dim=0))  # shifted by the max: no overflow
    return (weights * torch.stack(outs)).sum(dim=0) / weights.sum(dim=0)
