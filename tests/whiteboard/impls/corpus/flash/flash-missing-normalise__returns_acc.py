import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    Tq, d = q.shape[-2], q.shape[-1]
    Tk = k.shape[-2]
    scale = 1.0 / math.sqrt(d)
    m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
    l = torch.zeros(q.shape[:-1] + (1,), dtype=q.dtype, device=q.device)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    qi = torch.arange(Tq, device=q.device)[:, None]
    for start in range(0, Tk, block_size):
        kb = k[..., start:start + block_size, :]
        vb = v[..., start:start + block_size, :]
        s = q @ kb.transpose(-2, -1) * scale
        if causal:
            kj = torch.arange(start, start + kb.shape[-2], device=q.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - m_safe)
        alpha = torch.exp(m - m_safe)
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        acc = alpha * acc + p @ vb
        m = m_new
    return acc
