import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    w = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-2)
    if mask is not None:
        w = w * mask
    return w @ v
