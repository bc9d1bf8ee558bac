import torch


def dropout(x, p, training, generator=None):
    if p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p  # training is never looked at
    return x * keep / (1 - p)
