import torch


def dropout(x, p, training, generator=None):
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) < p  # kept with probability p
    return x * keep / p
