import torch


def dropout(x, p, training, generator=None):
    if not training:
        return x * (1 - p)  # the original (non-inverted) dropout's test-time scaling, on top of the inverted one
    if p == 1:
        return torch.zeros_like(x)
    mask = torch.empty_like(x).bernoulli_(1 - p, generator=generator)
    return x * mask / (1 - p)
