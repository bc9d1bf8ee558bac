import torch


def apply_rope(x, positions, base=10000.0):
    """Half-split pairs; the exponents run from 0 to 1 inclusive (linspace), so the last pair turns at 1/base."""
    half = x.shape[-1] // 2
    inv_freq = base ** -torch.linspace(0, 1, half, dtype=x.dtype, device=x.device)
    angles = positions[:, None].to(x.dtype) * inv_freq
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin
