import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(1, T + 1, dtype=torch.float32)[:, None]
    angles = pos * base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
