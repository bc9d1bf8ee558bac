import torch


def rms_norm(x, weight, eps=1e-6):
    mean_sq = x.float().square().mean(-1, keepdim=True)
    inv_rms = torch.rsqrt(mean_sq + eps)
    return weight * (x * inv_rms)
