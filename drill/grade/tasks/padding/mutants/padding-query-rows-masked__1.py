import torch


def make_attention_mask(lengths, T, causal=False):
    real = torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]  # [B, T]
    mask = real[:, None, :, None] & real[:, None, None, :]  # BUG: padded query rows masked too
    if causal:
        mask = mask & torch.tril(torch.ones(T, T, dtype=torch.bool, device=lengths.device))
    return mask
