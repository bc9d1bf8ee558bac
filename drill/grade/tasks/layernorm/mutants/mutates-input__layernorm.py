import torch


def layer_norm(x, weight, bias, eps=1e-5):
    x -= x.mean(dim=-1, keepdim=True)
    var = (x * x).mean(dim=-1, keepdim=True)
    return x / torch.sqrt(var + eps) * weight + bias
