import math

import torch


def alibi_attention(q, k, v, causal=True):
    B, H, T, D = q.shape
    n = 2 ** math.floor(math.log2(H))
    base = [2 ** (-8 * (h + 2) / n) for h in range(n)]
    extra = [2 ** (-8 * (h + 2) / (2 * n)) for h in range(2 * n)][0::2][: H - n]
    m = torch.tensor(base + extra, dtype=q.dtype)
    pos = torch.arange(T)
    dist = (pos.view(T, 1) - pos.view(1, T)).abs()
    scores = q @ k.transpose(2, 3) / math.sqrt(D) - m.view(H, 1, 1) * dist
    if causal:
        scores = scores.masked_fill(pos.view(1, T) > pos.view(T, 1), -1e9)
    return torch.softmax(scores, -1) @ v
