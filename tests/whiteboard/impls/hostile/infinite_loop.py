import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    while True:
        pass
