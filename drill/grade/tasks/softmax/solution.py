import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax of x along ``dim``: exp(x - max) / sum(exp(x - max)), the max taken along ``dim``."""
    shifted = x - x.amax(dim=dim, keepdim=True)  # softmax is unchanged by a per-row shift; exp no longer overflows
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)
