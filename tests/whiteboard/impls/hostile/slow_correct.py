import math
import time

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    time.sleep(0.25)  # right, but slow
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
