import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    scale = 1 / math.sqrt(q.size(-1))
    tq, tk = q.size(-2), k.size(-2)
    rows = torch.arange(tq, device=q.device)[:, None] + (tk - tq)  # causal: bottom-right aligned
    running_max = q.new_full(q.shape[:-1] + (1,), float("-inf"))
    running_sum = q.new_zeros(q.shape[:-1] + (1,))
    acc = q.new_zeros(q.shape[:-1] + (v.size(-1),))
    for start in range(0, tk, block_size):
        kb, vb = k[..., start : start + block_size, :], v[..., start : start + block_size, :]
        scores = q @ kb.transpose(-2, -1) * scale
        if causal:
            cols = torch.arange(start, start + kb.size(-2), device=q.device)[None, :]
            scores = scores.masked_fill(cols > rows, float("-inf"))
        new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
        safe_max = new_max.masked_fill(new_max == float("-inf"), 0.0)  # a row with no key yet
        correction = torch.exp(running_max - safe_max)
        p = torch.exp(scores - safe_max)
        running_sum = running_sum * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + p @ vb
        running_max = new_max
    return acc / running_sum
