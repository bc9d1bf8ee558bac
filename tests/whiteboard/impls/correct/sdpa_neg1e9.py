import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.matmul(torch.softmax(scores, dim=-1), v)
