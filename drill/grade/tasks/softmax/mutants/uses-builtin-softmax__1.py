import torch


def softmax(x, dim=-1):
    return x.log_softmax(dim=dim).exp()
