import math

import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T).float().unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe = torch.zeros(T, d_model)
    pe[:, 0::2] = torch.cos(pos * div_term)
    pe[:, 1::2] = torch.sin(pos * div_term)
    return pe
