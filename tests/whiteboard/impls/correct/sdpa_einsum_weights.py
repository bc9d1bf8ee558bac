import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights
