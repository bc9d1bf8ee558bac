import torch


def rms_norm(x, weight, eps=1e-6):
    h = x.float()
    return weight * (h / (h.pow(2).mean(dim=-1, keepdim=True) + eps)).to(x.dtype)
