import torch


def layer_norm(x, weight, bias, eps=1e-5):
    """LayerNorm over the last dim, written by hand.

    x: [..., D]   weight: [D]   bias: [D]
    returns: [..., D], same dtype and device as x:
        (x - mean) / sqrt(var + eps) * weight + bias
    with mean and the biased variance (divide by D) over the last dim of each row.
    Rules: no F.layer_norm / nn.LayerNorm, do not modify the inputs.
    """
    raise NotImplementedError
