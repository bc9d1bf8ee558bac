import torch


def attention_backward(q, k, v, d_out, mask=None):
    """Broken on purpose."""
    scale = q.shape[-1] ** -0.5
    s = torch.einsum("...qd,...kd->...qk", q, k) * scale
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    p = s.softmax(dim=-1)
    dv = torch.einsum("...qk,...qe->...ke", p.transpose(-2, -1), d_out)
    dp = torch.einsum("...qe,...ke->...qk", d_out, v)
    ds = p * (dp - (d_out * (p @ v)).sum(dim=-1, keepdim=True))
    dq = torch.einsum("...qk,...kd->...qd", ds, k) * scale
    dk = torch.einsum("...qk,...qd->...kd", ds, q) * scale
    return dq, dk, dv
