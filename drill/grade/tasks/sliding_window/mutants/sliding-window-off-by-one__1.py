import math

import torch


def sliding_window_attention(q, k, v, window):
    t = q.size(-2)
    i = torch.arange(t, device=q.device)[:, None]
    j = torch.arange(t, device=q.device)[None, :]
    allowed = (j <= i) & (j >= i - window)  # window + 1 keys
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
