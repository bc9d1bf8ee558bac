import torch


def dropout(x, p, training, generator=None):
    """Standard (non-inverted) dropout's training half: a Bernoulli mask and nothing else."""
    if not training:
        return x
    return x * torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)
