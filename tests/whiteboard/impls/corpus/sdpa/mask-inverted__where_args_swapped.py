import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.size(-1))
    s = torch.einsum("...qd,...kd->...qk", q, k) * scale
    if mask is not None:
        s = torch.where(mask, torch.full_like(s, float("-inf")), s)
    p = s.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", p, v)
