import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    """Broken on purpose: blocks over queries and keys, but builds every head's whole score matrix first."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        T = q.shape[-2]
        scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device)), float("-inf"))
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for qs in range(0, q.shape[-2], block_size):
        out[..., qs:qs + block_size, :] = torch.softmax(scores[..., qs:qs + block_size, :], dim=-1) @ v
    return out
