import math

import torch


def sliding_window_attention(q, k, v, window):
    """A band from tril and triu, -inf fill, torch.softmax."""
    t = q.size(-2)
    ones = torch.ones(t, t, dtype=torch.bool, device=q.device)
    band = torch.tril(ones) & torch.triu(ones, diagonal=-(window - 1))
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    scores = torch.where(band, scores, torch.full_like(scores, float("-inf")))
    return torch.softmax(scores, dim=-1) @ v
