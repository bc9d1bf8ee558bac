import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    for i in range(200_000):
        print("debugging attention scores, step", i, "x" * 80)
    return q
