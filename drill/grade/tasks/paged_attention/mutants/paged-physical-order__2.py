import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """Broken on purpose: the sequence's blocks walked in ascending block id."""
    bs = k_cache.shape[1]
    outs = []
    for b in range(q.shape[0]):
        n = int(context_lens[b])
        blocks = block_table[b, : (n + bs - 1) // bs].sort().values
        k = k_cache[blocks].flatten(0, 1)[:n]
        v = v_cache[blocks].flatten(0, 1)[:n]
        s = torch.einsum("hd,thd->ht", q[b], k) / math.sqrt(q.shape[-1])
        outs.append(torch.einsum("ht,thd->hd", s.softmax(-1), v))
    return torch.stack(outs)
