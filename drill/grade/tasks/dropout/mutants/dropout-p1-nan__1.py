import torch


def dropout(x, p, training, generator=None):
    if not training:
        return x
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    return x * keep / (1 - p)  # p = 1: 0 / 0
