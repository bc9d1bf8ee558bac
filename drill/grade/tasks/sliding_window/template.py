import math

import torch


def sliding_window_attention(q, k, v, window):
    """Causal sliding-window attention, softmax(q k^T / sqrt(D)) v over a local window.

    q, k: [..., T, D]   v: [..., T, Dv]   (any leading dims)   window: int >= 1
    Query i attends keys j with i - window < j <= i: the last `window` positions, itself included.
    returns: [..., T, Dv]
    Rules: no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
