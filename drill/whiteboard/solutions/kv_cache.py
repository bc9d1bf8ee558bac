import math

import torch


def decode_step(q, k_new, v_new, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k_new], dim=-2)
    v_cache = torch.cat([v_cache, v_new], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.size(-1))
    return torch.softmax(scores, dim=-1) @ v_cache, k_cache, v_cache
