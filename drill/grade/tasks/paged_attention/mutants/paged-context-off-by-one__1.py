import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """Broken on purpose."""
    bs = k_cache.shape[1]
    outs = []
    for b in range(q.shape[0]):
        t = torch.arange(int(context_lens[b]) + 1, device=q.device)
        blk = block_table[b, t // bs]
        k, v = k_cache[blk, t % bs], v_cache[blk, t % bs]
        s = torch.einsum("hd,thd->ht", q[b], k) / math.sqrt(q.shape[-1])
        outs.append(torch.einsum("ht,thd->hd", s.softmax(-1), v))
    return torch.stack(outs)
