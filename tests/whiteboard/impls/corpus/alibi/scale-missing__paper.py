import math

import torch


def get_slopes(n):
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return pow2(n)
    closest = 2 ** math.floor(math.log2(n))
    return pow2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def alibi_attention(q, k, v, causal=True):
    B, H, T, D = q.shape
    slopes = torch.tensor(get_slopes(H), dtype=q.dtype, device=q.device).view(1, H, 1, 1)
    pos = torch.arange(T, device=q.device)
    dist = (pos[:, None] - pos[None, :]).abs().to(q.dtype)
    scores = q @ k.transpose(-2, -1) - slopes * dist
    if causal:
        scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
