import torch


def apply_rope(x, positions, base=10000.0):
    D = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, D // 2, device=x.device, dtype=x.dtype) / D)
    angles = positions.to(x.dtype)[:, None] * inv_freq  # [T, D/2]
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return out.flatten(-2)
