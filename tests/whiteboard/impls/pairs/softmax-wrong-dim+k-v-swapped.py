import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ v.transpose(-2, -1) / math.sqrt(q.size(-1))  # BUG 1: scores against v, weights applied to k
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-2) @ k  # BUG 2: normalised over the queries
