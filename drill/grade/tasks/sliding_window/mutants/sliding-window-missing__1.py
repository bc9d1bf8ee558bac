import math

import torch


def sliding_window_attention(q, k, v, window):
    t = q.size(-2)
    allowed = torch.tril(torch.ones(t, t, dtype=torch.bool, device=q.device))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
