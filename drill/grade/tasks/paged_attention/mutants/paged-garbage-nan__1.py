import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """Broken on purpose: the whole table gathered, garbage masked in the scores only."""
    B, max_blocks = block_table.shape
    bs, h, d = k_cache.shape[1:]
    k = k_cache[block_table].reshape(B, max_blocks * bs, h, d)
    v = v_cache[block_table].reshape(B, max_blocks * bs, h, d)
    s = torch.einsum("bhd,bthd->bht", q, k) / math.sqrt(d)
    valid = torch.arange(max_blocks * bs, device=q.device)[None, :] < context_lens[:, None]
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    return torch.einsum("bht,bthd->bhd", s.softmax(-1), v)
