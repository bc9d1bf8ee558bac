"""Returns a stride-0 view of 10**10 elements: 4 bytes of memory, 40 GB once made contiguous."""
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    return torch.empty(1).expand(10**10)
