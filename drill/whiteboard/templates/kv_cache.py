import math

import torch


def decode_step(q, k_new, v_new, k_cache, v_cache):
    """One decoding step with a key/value cache.

    q, k_new, v_new: [B, H, 1, d] for the new token   k_cache, v_cache: [B, H, T, d] (T may be 0)
    Append the new key and value to the cache, then attend from q to every cached position.
    returns: (out [B, H, 1, d], k_cache [B, H, T+1, d], v_cache [B, H, T+1, d]); do not modify the inputs.
    """
    raise NotImplementedError
