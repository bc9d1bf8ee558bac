import torch


def rms_norm(x, weight, eps=1e-6):
    return weight * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
