import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """All splits at once: keys padded to whole chunks, reshaped to [..., n, c, D], merged by logsumexp."""
    *lead, tk, d = k.shape
    c = math.ceil(tk / n_splits)
    n = math.ceil(tk / c)  # chunks actually needed (fewer than n_splits when c * (n_splits - 1) >= Tk)
    pad = n * c - tk
    kp = torch.cat([k, k.new_zeros(*lead, pad, d)], dim=-2).reshape(*lead, n, c, d)
    vp = torch.cat([v, v.new_zeros(*lead, pad, v.size(-1))], dim=-2).reshape(*lead, n, c, v.size(-1))
    scores = torch.einsum("...qd,...ncd->...nqc", q, kp) / math.sqrt(d)
    real = torch.arange(n * c, device=k.device).reshape(n, 1, c) < tk
    scores = scores.masked_fill(~real, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)  # [..., n, Tq, 1]
    partial = torch.exp(scores - lse) @ vp  # [..., n, Tq, Dv], each normalised in its chunk
    weights = torch.exp(lse - torch.logsumexp(lse, dim=-3, keepdim=True))
    return (weights * partial).sum(dim=-3)
