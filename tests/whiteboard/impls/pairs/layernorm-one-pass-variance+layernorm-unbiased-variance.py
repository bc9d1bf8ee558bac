import torch


def layer_norm(x, weight, bias, eps=1e-5):
    n = x.shape[-1]
    s1 = x.sum(dim=-1, keepdim=True)
    s2 = (x * x).sum(dim=-1, keepdim=True)
    var = (s2 - s1 * s1 / n) / (n - 1)  # sample variance from running sums
    return (x - s1 / n) / torch.sqrt(var + eps) * weight + bias
