import sys

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    sys.exit(3)
