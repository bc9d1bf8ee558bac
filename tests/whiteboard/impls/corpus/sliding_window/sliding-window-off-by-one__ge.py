import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    i = torch.arange(T, device=q.device).unsqueeze(1)
    j = torch.arange(T, device=q.device).unsqueeze(0)
    keep = (j <= i) & (j >= i - window)
    scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
