import math

import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    """The PyTorch-tutorial way: exp of a log-spaced div_term, all in float32, filled by slices."""
    position = torch.arange(T, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(base) / d_model))
    pe = torch.zeros(T, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
