import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.size(-1)
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    attn = torch.softmax(scores, dim=-2)
    return torch.matmul(attn, v)
