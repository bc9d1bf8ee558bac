import math

import torch


def attention_backward(q, k, v, d_out, mask=None):
    """Broken on purpose: torch.func.vjp does the work."""

    def forward(q, k, v):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    _, pullback = torch.func.vjp(forward, q, k, v)
    return pullback(d_out)
