import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    attn = torch.softmax(scores, dim=-2)
    if mask is not None:
        attn = attn.masked_fill(~mask, 0.0)
    return attn @ v
