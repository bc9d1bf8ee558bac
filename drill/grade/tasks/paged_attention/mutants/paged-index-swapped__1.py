import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """Broken on purpose."""
    bs = k_cache.shape[1]
    out = torch.empty_like(q)
    for b in range(q.shape[0]):
        t = torch.arange(int(context_lens[b]), device=q.device)
        blk, slot = block_table[b, t % bs], t // bs
        k, v = k_cache[blk, slot], v_cache[blk, slot]
        s = torch.einsum("hd,thd->ht", q[b], k) / math.sqrt(q.shape[-1])
        out[b] = torch.einsum("ht,thd->hd", s.softmax(-1), v)
    return out
