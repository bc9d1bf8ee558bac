import torch


def rms_norm(x, weight, eps=1e-6):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h
