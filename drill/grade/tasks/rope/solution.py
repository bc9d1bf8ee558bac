import torch


def apply_rope(x, positions, base=10000.0):
    half = x.size(-1) // 2
    freqs = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2 / x.size(-1))
    angles = positions.to(x.device, torch.float64)[:, None] * freqs[None, :]  # [T, d/2]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
