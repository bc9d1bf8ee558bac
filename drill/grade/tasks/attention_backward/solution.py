import math

import torch


def attention_backward(q, k, v, d_out, mask=None):
    scale = 1 / math.sqrt(q.size(-1))
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # the same mask as the forward
    p = torch.softmax(scores, dim=-1)  # P recomputed, as FlashAttention does
    dv = p.transpose(-2, -1) @ d_out
    dp = d_out @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))  # softmax Jacobian: diag(p) - p p^T, row by row
    dq = ds @ k * scale
    dk = ds.transpose(-2, -1) @ q * scale
    return dq, dk, dv
