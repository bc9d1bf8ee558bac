import torch


def apply_rope(x, positions, base=10000.0):
    D = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, D, 2, device=x.device, dtype=x.dtype) / D)
    angles = positions.to(x.dtype)[:, None] * inv_freq
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = even * cos - odd * sin
    x[..., 1::2] = even * sin + odd * cos
    return x
