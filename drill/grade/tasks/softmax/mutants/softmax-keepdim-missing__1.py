import torch


def softmax(x, dim=-1):
    e = (x - x.max(dim=dim).values).exp()
    return e / e.sum(dim=dim)
