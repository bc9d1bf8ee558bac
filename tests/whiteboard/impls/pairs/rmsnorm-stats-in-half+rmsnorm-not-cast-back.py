import torch


def rms_norm(x, weight, eps=1e-6):
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed.float() * weight.float()
