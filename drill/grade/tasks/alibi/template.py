import math

import torch


def alibi_attention(q, k, v, causal=True):
    """Attention with linear biases (ALiBi, Press et al. 2022): no position embeddings, a distance penalty instead.

    q, k: [B, H, T, D]   v: [B, H, T, Dv]
    scores[b, h, i, j] = q_i . k_j / sqrt(D) - m_h * |i - j|; with causal=True only keys j <= i remain.
    Head slopes m_h as in the paper's code: for H a power of two, m_h = 2 ** (-8 * h / H) for
    h = 1..H (8 heads: 1/2, 1/4, ..., 1/256); otherwise the slopes for the closest power of two
    n < H, followed by every other slope of 2n heads (the 1st, 3rd, ...) until there are H.
    returns: [B, H, T, Dv]
    Rules: no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
