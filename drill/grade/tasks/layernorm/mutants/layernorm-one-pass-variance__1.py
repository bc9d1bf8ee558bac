import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = (x * x).mean(dim=-1, keepdim=True) - mean * mean  # E[x^2] - E[x]^2
    return (x - mean) * torch.rsqrt(var + eps) * weight + bias
