import math

import torch


def stable_softmax(x, dim):
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = (q / math.sqrt(d)) @ k.transpose(-2, -1)
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    weights = stable_softmax(scores, dim=-1)
    return weights @ v, weights
