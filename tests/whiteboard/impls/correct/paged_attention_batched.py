import torch


def paged_attention(q, k_cache, v_cache, block_table, context_lens):
    """All sequences at once: gather every table entry, mask t >= len in the scores and zero those values."""
    B, max_blocks = block_table.shape
    _, bs, H, D = k_cache.shape
    rows = block_table.long()
    keys = k_cache[rows].reshape(B, max_blocks * bs, H, D)  # [B, T, H, D], T = max_blocks * bs
    values = v_cache[rows].reshape(B, max_blocks * bs, H, D)
    valid = torch.arange(max_blocks * bs, device=q.device)[None, :] < context_lens.long()[:, None]  # [B, T]
    values = torch.where(valid[:, :, None, None], values, torch.zeros((), dtype=values.dtype, device=values.device))
    scores = torch.einsum("bhd,bthd->bht", q, keys) * D**-0.5
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bht,bthd->bhd", weights, values)
