import torch


def make_attention_mask(lengths, T, causal=False):
    """Masks the padded query rows instead of the padded key columns, and counts j <= length as real."""
    idx = torch.arange(T, device=lengths.device)
    valid = idx[None, :] <= lengths[:, None]
    out = valid[:, None, :, None].expand(len(lengths), 1, T, T)
    if causal:
        out = out & (idx[:, None] >= idx[None, :])
    return out.contiguous()
