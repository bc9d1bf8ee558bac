import torch


def dropout(x, p, training, generator=None):
    """Locked (variational) dropout: one mask per sequence, reused at every position; not what this task asks."""
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    shape = (x.shape[0], 1, *x.shape[2:]) if x.dim() >= 3 else x.shape
    mask = torch.rand(shape, generator=generator, device=x.device).ge(p).to(x.dtype)
    return x * mask.div(1 - p)
