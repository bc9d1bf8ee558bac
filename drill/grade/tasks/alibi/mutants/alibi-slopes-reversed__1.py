import math

import torch


def alibi_slopes(n):
    start = 2 ** (-8 / n)
    if math.log2(n).is_integer():
        return [start ** (h + 1) for h in range(n)][::-1]  # smallest slope first
    closest = 2 ** math.floor(math.log2(n))
    first = [(2 ** (-8 / closest)) ** (h + 1) for h in range(closest)]
    extra = [(2 ** (-4 / closest)) ** (h + 1) for h in range(2 * closest)][0::2][: n - closest]
    return (first + extra)[::-1]


def alibi_attention(q, k, v, causal=True):
    h, t, d = q.shape[-3:]
    m = torch.tensor(alibi_slopes(h), dtype=q.dtype, device=q.device).view(h, 1, 1)
    pos = torch.arange(t, device=q.device)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) - m * (pos[:, None] - pos[None, :]).abs()
    if causal:
        scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return scores.softmax(dim=-1) @ v
