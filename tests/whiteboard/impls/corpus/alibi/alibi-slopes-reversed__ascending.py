import math

import torch


def slopes_for(H):
    n = 2 ** int(math.floor(math.log2(H)))
    base = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    if n == H:
        return base[::-1]
    extra = [2.0 ** (-8.0 * h / (2 * n)) for h in range(1, 2 * n + 1)][0::2]
    return (base + extra[: H - n])[::-1]


def alibi_attention(q, k, v, causal=True):
    H, T, D = q.shape[1], q.shape[2], q.shape[3]
    m = torch.tensor(slopes_for(H), dtype=q.dtype, device=q.device)
    i = torch.arange(T, device=q.device).view(T, 1)
    j = torch.arange(T, device=q.device).view(1, T)
    bias = -m.view(H, 1, 1) * (i - j).abs()
    scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(D) + bias
    if causal:
        scores = scores.masked_fill(j > i, float("-inf"))
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(scores, -1), v)
