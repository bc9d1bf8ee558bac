import math

import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """One decode step of attention over a paged KV cache (vLLM's PagedAttention).

    q: [B, H, D], one new query per sequence.
    k_cache, v_cache: [num_blocks, block_size, H, D], the physical blocks shared by all sequences.
    block_table: int [B, max_blocks]; context_lens: int [B], each >= 1.
    Token t (0 <= t < context_lens[b]) of sequence b lives in physical block block_table[b, t // block_size],
    slot t % block_size. Table entries past a sequence's last block may hold any block id, and slots past
    context_lens hold garbage (possibly NaN or inf, as in memory from torch.empty): never let them count.
    Scale 1/sqrt(D), no mask otherwise. returns: [B, H, D].
    Rules: no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
