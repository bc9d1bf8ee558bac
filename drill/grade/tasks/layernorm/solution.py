import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dim=-1, keepdim=True)  # biased: divide by D, as torch does
    return centred / torch.sqrt(var + eps) * weight + bias
