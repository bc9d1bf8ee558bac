import math

import torch


def _slopes(h, device):
    """The closest power of two's slopes start one head late (h = 2..n+1); the extra heads are written out right."""
    n = 2 ** math.floor(math.log2(h))
    base = 2.0 ** (-8.0 * torch.arange(2, n + 2, device=device) / n)
    if n == h:
        return base
    extra = 2.0 ** (-8.0 * torch.arange(1, 2 * n, 2, device=device) / (2 * n))
    return torch.cat([base, extra[: h - n]])


def alibi_attention(q, k, v, causal=True):
    T = q.size(-2)
    pos = torch.arange(T, device=q.device)
    dist = (pos[:, None] - pos[None, :]).abs().to(q.dtype)
    bias = -_slopes(q.size(1), q.device).to(q.dtype)[:, None, None] * dist
    att = q @ k.transpose(-1, -2) * q.size(-1) ** -0.5 + bias
    if causal:
        att = att.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return att.softmax(dim=-1) @ v
