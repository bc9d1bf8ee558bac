import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - m)
    return e / e.sum(dim=-1, keepdim=True)
