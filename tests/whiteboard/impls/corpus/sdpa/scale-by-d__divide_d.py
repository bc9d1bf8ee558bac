import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / d
    if mask is not None:
        scores = scores.masked_fill(mask == False, float("-inf"))  # noqa: E712
    attn = torch.softmax(scores, dim=-1)
    return torch.matmul(attn, v)
