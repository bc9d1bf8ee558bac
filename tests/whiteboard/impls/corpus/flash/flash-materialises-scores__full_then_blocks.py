import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        Tq, Tk = s.shape[-2], s.shape[-1]
        s = s.masked_fill(torch.ones(Tq, Tk, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    l = torch.zeros_like(m)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    for start in range(0, k.shape[-2], block_size):
        p = torch.exp(s[..., start:start + block_size] - m)
        l = l + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block_size, :]
    return acc / l
