import math

import torch


def split_kv_attention(q, k, v, n_splits):
    """Flash-Decoding: softmax(q k^T / sqrt(D)) v computed over the keys in n_splits chunks, then merged exactly.

    q: [..., Tq, D] (Tq is 1 when decoding)   k: [..., Tk, D]   v: [..., Tk, Dv]; no mask, not causal.
    Split the keys (and values) into chunks of ceil(Tk / n_splits) keys (the last may be shorter).
    Each chunk gives its partial output o_c [..., Tq, Dv], normalised inside the chunk, and the
    log-sum-exp L_c [..., Tq] of its scores; merge the partials so the result equals full attention.
    returns: [..., Tq, Dv]. Rules: no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
