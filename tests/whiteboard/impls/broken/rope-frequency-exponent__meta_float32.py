import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    freqs = 1.0 / (base ** (-torch.arange(0, d, 2)[: d // 2].float() / d))
    angles = torch.outer(positions.float(), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * rot).flatten(-2).type_as(x)
