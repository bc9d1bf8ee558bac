import math

import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T).float().unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    angles = pos * div_term
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
