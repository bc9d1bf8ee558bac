import torch


def rms_norm(x, weight, eps=1e-6):
    ms = torch.mean(x.float() ** 2, dim=-1)
    normed = x.float() * torch.rsqrt(ms + eps)
    return (normed * weight).to(x.dtype)
