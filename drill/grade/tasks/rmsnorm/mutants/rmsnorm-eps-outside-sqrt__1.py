import torch


def rms_norm(x, weight, eps=1e-6):
    h = x.float()
    rms = h.pow(2).mean(dim=-1, keepdim=True).sqrt()
    return weight * (h / (rms + eps)).to(x.dtype)
