import torch


def softmax(x, dim=-1):
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    other = -2 if dim in (-1, x.dim() - 1) else -1
    return e / e.sum(dim=other, keepdim=True)
