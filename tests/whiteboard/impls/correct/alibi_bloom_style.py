import math

import torch


def slopes_for(n_heads):
    """BLOOM's build_alibi_tensor way: closest power of two, then the odd powers of the next base."""
    closest = 2 ** math.floor(math.log2(n_heads))
    base = 2 ** (-(2 ** -(math.log2(closest) - 3)))
    slopes = base ** torch.arange(1, 1 + closest, dtype=torch.float64)
    if closest != n_heads:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * closest) - 3)))
        extra = extra_base ** torch.arange(1, 1 + 2 * (n_heads - closest), 2, dtype=torch.float64)
        slopes = torch.cat([slopes, extra])
    return slopes


def alibi_attention(q, k, v, causal=True):
    """Causal: the key-position bias m * j (equal to -m * (i - j) up to a row constant); otherwise -m * |i - j|."""
    H, T, D = q.shape[-3:]
    m = slopes_for(H).to(q.device, q.dtype)[:, None, None]
    pos = torch.arange(T, device=q.device)
    if causal:
        bias = m * pos.to(q.dtype)[None, None, :]
    else:
        bias = -m * (pos[:, None] - pos[None, :]).abs().to(q.dtype)
    scores = (q @ k.transpose(-2, -1)) * D**-0.5 + bias
    if causal:
        scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), 1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
