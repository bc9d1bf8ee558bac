import math

import torch


def alibi_slopes(n):
    def power_of_two(n):
        start = 2 ** (-8 / n)
        return [start ** (h + 1) for h in range(n)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_two(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def alibi_attention(q, k, v, causal=True):
    h, t, d = q.shape[-3:]
    m = torch.tensor(alibi_slopes(h), dtype=q.dtype, device=q.device)[:, None, None]  # [H, 1, 1]
    pos = torch.arange(t, device=q.device)
    distance = (pos[:, None] - pos[None, :]).abs().to(q.dtype)  # [T, T]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) - m * distance
    if causal:
        scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
