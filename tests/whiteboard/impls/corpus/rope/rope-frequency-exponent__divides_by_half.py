import torch


def apply_rope(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    i = torch.arange(half, dtype=torch.float64, device=x.device)
    theta = base ** (-2 * i / half)
    ang = positions.double()[:, None] * theta[None, :]
    c, s = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * c - b * s, a * s + b * c], dim=-1)
