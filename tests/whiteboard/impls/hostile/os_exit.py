import os

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    print("about to leave")
    os._exit(7)
