import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mu = torch.mean(x, -1, keepdim=True)
    sigma = torch.sqrt(torch.mean(x**2, -1, keepdim=True) - mu**2)
    return weight * (x - mu) / (sigma + eps) + bias
