import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float32)
    angles = pos / base ** (i / d_model)  # i / d instead of 2i / d
    pe = torch.zeros(T, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
