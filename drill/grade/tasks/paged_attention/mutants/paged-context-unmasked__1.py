import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """Broken on purpose: every slot of the used blocks, the last block's garbage included."""
    bs = k_cache.shape[1]
    outs = []
    for b in range(q.shape[0]):
        used = (int(context_lens[b]) + bs - 1) // bs
        blocks = block_table[b, :used]
        k, v = k_cache[blocks].flatten(0, 1), v_cache[blocks].flatten(0, 1)
        s = torch.einsum("hd,thd->ht", q[b], k) / math.sqrt(q.shape[-1])
        outs.append(torch.einsum("ht,thd->hd", s.softmax(-1), v))
    return torch.stack(outs)
