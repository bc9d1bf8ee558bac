import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    inv = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = positions.float()[:, None] * inv
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1 = x[..., :h].clone()
    x2 = x[..., h:].clone()
    x[..., :h] = x1 * cos - x2 * sin
    x[..., h:] = x2 * cos + x1 * sin
    return x
