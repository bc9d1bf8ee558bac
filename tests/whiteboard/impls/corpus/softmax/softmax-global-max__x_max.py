import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.max()
    e = torch.exp(x - m)
    return e / e.sum(dim=dim, keepdim=True)
