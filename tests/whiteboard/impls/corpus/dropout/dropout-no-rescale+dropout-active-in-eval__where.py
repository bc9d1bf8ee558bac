import torch


def dropout(x, p, training, generator=None):
    if p == 0:
        return x.clone()
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    return torch.where(keep, x, torch.zeros_like(x))
