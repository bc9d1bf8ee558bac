import torch


def dropout(x, p, training, generator=None):
    if not training or p == 0:
        return x.clone()
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    return x * keep / (1 - p)
