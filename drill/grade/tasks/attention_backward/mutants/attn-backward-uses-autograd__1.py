import math

import torch


def attention_backward(q, k, v, d_out, mask=None):
    """Broken on purpose: autograd does the work."""
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    with torch.enable_grad():
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        out.backward(d_out)
    return q.grad, k.grad, v.grad
