import torch


def dropout(x, p, training, generator=None):
    if not training:
        return x / (1 - p)  # scaled again at eval
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    return x * keep / (1 - p)
