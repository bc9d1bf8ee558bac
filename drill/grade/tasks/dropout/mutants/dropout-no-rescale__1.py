import torch


def dropout(x, p, training, generator=None):
    if not training or p == 0:
        return x
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    return x * keep  # the survivors are not scaled by 1 / (1 - p)
