import torch


def rms_norm(x, weight, eps=1e-6):
    h = x.float()
    return weight * (h / torch.sqrt(h.var(dim=-1, keepdim=True) + eps)).to(x.dtype)
