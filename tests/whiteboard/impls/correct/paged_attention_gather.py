import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    block_size = k_cache.size(1)
    outs = []
    for b in range(q.size(0)):
        t = torch.arange(int(context_lens[b]), device=q.device)
        blocks = block_table[b, t // block_size].long()  # logical block -> physical block
        keys, values = k_cache[blocks, t % block_size], v_cache[blocks, t % block_size]  # [L, H, D]
        scores = torch.einsum("hd,lhd->hl", q[b], keys) / math.sqrt(q.size(-1))
        outs.append(torch.einsum("hl,lhd->hd", torch.softmax(scores, dim=-1), values))
    return torch.stack(outs)
