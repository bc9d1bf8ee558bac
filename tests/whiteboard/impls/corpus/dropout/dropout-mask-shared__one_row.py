import torch


def dropout(x, p, training, generator=None):
    if not training or p == 0:
        return x.clone()
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape[-1:], generator=generator, device=x.device) >= p
    return torch.where(keep, x / (1 - p), torch.zeros_like(x))
