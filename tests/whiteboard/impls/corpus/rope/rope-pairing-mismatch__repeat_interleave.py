import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).float() / d))
    freqs = positions.to(inv_freq.dtype)[:, None] * inv_freq[None, :]
    emb = freqs.repeat_interleave(2, dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin
