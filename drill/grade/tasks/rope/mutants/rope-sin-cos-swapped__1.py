import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    D = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, D, 2, device=x.device).to(x.dtype) / D)
    freqs = torch.outer(positions.to(x.dtype), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # [T, D]: dim i and i + D/2 share an angle
    return x * emb.sin() + rotate_half(x) * emb.cos()
