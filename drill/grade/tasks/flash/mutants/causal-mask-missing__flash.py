import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    """Broken on purpose: the causal flag is accepted and never used."""
    scale = 1 / math.sqrt(q.size(-1))
    running_max = q.new_full(q.shape[:-1] + (1,), float("-inf"))
    running_sum = q.new_zeros(q.shape[:-1] + (1,))
    acc = q.new_zeros(q.shape[:-1] + (v.size(-1),))
    for start in range(0, k.size(-2), block_size):
        kb, vb = k[..., start : start + block_size, :], v[..., start : start + block_size, :]
        scores = q @ kb.transpose(-2, -1) * scale
        new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
        correction = torch.exp(running_max - new_max)
        p = torch.exp(scores - new_max)
        running_sum = running_sum * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + p @ vb
        running_max = new_max
    return acc / running_sum
