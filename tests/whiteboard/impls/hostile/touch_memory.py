import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    big = torch.ones(2**30, dtype=torch.float32)  # 4 GiB, every page touched
    return q + big[0]
