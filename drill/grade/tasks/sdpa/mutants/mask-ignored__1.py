import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores.masked_fill(~mask, float("-inf"))  # BUG: the result is discarded, no mask applies
    return torch.softmax(scores, dim=-1) @ v
