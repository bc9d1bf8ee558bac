import math

import torch


def padded_attention(q, k, v, lengths):
    """Attention over a batch of padded sequences: keys at positions >= lengths[b] are padding.

    q, k, v: [B, H, T, d]   lengths: int tensor [B], 1 <= lengths[b] <= T
    returns: [B, H, T, d]; no query may attend to a padding key.
    """
    raise NotImplementedError
