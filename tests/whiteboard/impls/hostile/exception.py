import torch


def helper(scores):
    return scores.softmax(dim=-1) @ undefined_tensor


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    return helper(scores)
