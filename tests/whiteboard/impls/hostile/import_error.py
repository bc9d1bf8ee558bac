import torch
import flash_attn_that_is_not_installed


def scaled_dot_product_attention(q, k, v, mask=None):
    return q
