import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    D = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, D, 2, device=x.device).to(x.dtype) / D)
    freqs = torch.outer(positions.to(x.dtype), inv_freq)
    emb = freqs.repeat_interleave(2, dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()
