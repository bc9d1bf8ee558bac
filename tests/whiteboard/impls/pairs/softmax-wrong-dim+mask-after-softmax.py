import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-2)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
