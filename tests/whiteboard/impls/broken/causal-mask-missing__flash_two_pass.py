import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    T, Tk = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for i0 in range(0, T, block_size):
        qi = q[..., i0:i0 + block_size, :]
        rows = torch.arange(i0, i0 + qi.shape[-2], device=q.device)
        last = min(Tk, i0 + qi.shape[-2]) if causal else Tk
        m = torch.full(qi.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        for j0 in range(0, last, block_size):
            s = qi @ k[..., j0:j0 + block_size, :].transpose(-1, -2) * scale
            if causal:
                cols = torch.arange(j0, j0 + s.shape[-1], device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], -math.inf)
            m_new = torch.maximum(m, s.max(-1).values)
            l = l * torch.exp(m - m_new) + torch.exp(s - m_new[..., None]).sum(-1)
            m = m_new
        L = m + torch.log(l)
        acc = torch.zeros(*qi.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for j0 in range(0, last, block_size):
            s = qi @ k[..., j0:j0 + block_size, :].transpose(-1, -2) * scale
            acc += torch.exp(s - L[..., None]) @ v[..., j0:j0 + block_size, :]
        out[..., i0:i0 + block_size, :] = acc
    return out
