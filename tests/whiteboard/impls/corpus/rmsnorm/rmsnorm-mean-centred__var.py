import torch


def rms_norm(x, weight, eps=1e-6):
    h = x.float()
    h = h * torch.rsqrt(h.var(-1, keepdim=True, unbiased=False) + eps)
    return weight * h.to(x.dtype)
