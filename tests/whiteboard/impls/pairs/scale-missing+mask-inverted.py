import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)  # BUG 1: no 1/sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # BUG 2: True (may attend) is blocked
    return torch.softmax(scores, dim=-1) @ v
