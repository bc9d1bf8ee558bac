import torch


def layer_norm(x, weight, bias, eps=1e-5):
    """torch's own variance (unbiased=False divides by D) and rsqrt instead of a division."""
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mu) * torch.rsqrt(var + eps) * weight + bias
