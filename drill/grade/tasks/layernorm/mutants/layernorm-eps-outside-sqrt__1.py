import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    std = (x - mean).pow(2).mean(dim=-1, keepdim=True).sqrt()
    return (x - mean) / (std + eps) * weight + bias
