import math

import torch


def get_slopes(n_heads):
    def pow2_slopes(n):
        start = 2 ** (-8 / n)
        return [start**i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return pow2_slopes(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return pow2_slopes(closest) + get_slopes(2 * closest)[0::2][: n_heads - closest]


def alibi_attention(q, k, v, causal=True):
    H, T, D = q.shape[-3:]
    m = torch.tensor(get_slopes(H), dtype=q.dtype).view(H, 1, 1)
    i = torch.arange(T).view(-1, 1)
    j = torch.arange(T).view(1, -1)
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D) - m * (i - j).abs()
    if causal:
        s = s.masked_fill(j > i, float("-inf"))
    return s.softmax(-1) @ v
