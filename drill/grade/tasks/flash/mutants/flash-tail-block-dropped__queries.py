import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    """Broken on purpose: the partial query block is never computed (its rows stay 0)."""
    Tq, Tk = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    out = []
    for qs in range(0, Tq // block_size * block_size, block_size):
        qb = q[..., qs:qs + block_size, :]
        n = qb.shape[-2]
        m = torch.full(qb.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(*qb.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        k_stop = min(Tk, qs + n) if causal else Tk
        for ks in range(0, k_stop, block_size):
            s = qb @ k[..., ks:ks + block_size, :].transpose(-2, -1) * scale
            if causal:
                rows = torch.arange(qs, qs + n, device=q.device)[:, None]
                cols = torch.arange(ks, ks + s.shape[-1], device=q.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)
            l = alpha * l + p.sum(dim=-1)
            acc = alpha[..., None] * acc + p @ v[..., ks:ks + block_size, :]
            m = m_new
        out.append(acc / l[..., None])
    res = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    if out:
        res[..., : len(out) * block_size, :] = torch.cat(out, dim=-2)
    return res
