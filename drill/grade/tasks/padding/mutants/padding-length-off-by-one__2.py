import torch


def make_attention_mask(lengths, T, causal=False):
    keys = torch.arange(T, device=lengths.device)[None, :] < (lengths[:, None] - 1)  # BUG: hides the last real token
    mask = keys[:, None, None, :].expand(-1, 1, T, T)
    if causal:
        mask = mask & torch.tril(torch.ones(T, T, dtype=torch.bool, device=lengths.device))
    return mask
