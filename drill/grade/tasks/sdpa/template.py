import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d)) v, written by hand.

    q: [..., Tq, d]   k: [..., Tk, d]   v: [..., Tk, dv]
    mask: optional bool, broadcastable to [..., Tq, Tk]; True = may attend
    returns: [..., Tq, dv]
    Rules: no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
