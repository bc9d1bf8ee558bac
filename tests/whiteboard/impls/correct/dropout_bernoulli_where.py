import torch


def dropout(x, p, training, generator=None):
    """Bernoulli keep mask drawn in place, the scale applied through torch.where (no 0 / 0 at p = 1)."""
    if not training:
        return x
    keep = torch.empty_like(x).bernoulli_(1.0 - p, generator=generator).bool()
    return torch.where(keep, x / max(1.0 - p, 1e-12), torch.zeros((), dtype=x.dtype, device=x.device))
