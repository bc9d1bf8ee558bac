import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    q.mul_(1.0 / math.sqrt(q.size(-1)))
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
