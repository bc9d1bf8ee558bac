import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    logits = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
    if mask is not None:
        logits = logits.masked_fill(mask == 0, -1e9)
    attn = F.softmax(logits, dim=1)
    return torch.matmul(attn, v), attn
