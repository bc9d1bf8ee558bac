import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    logits = q @ k.mT
    if mask is not None:
        logits = logits + torch.zeros_like(logits).masked_fill(~mask, float("-inf"))
    m = logits.amax(dim=-1, keepdim=True)
    e = torch.exp(logits)
    w = e / e.sum(dim=-1, keepdim=True)
    return w @ v
