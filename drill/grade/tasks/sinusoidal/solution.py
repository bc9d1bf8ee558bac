import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    freqs = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * freqs  # [T, d_model / 2]
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    return pe.float()
