import torch


def make_attention_mask(lengths, T, causal=False):
    lengths = torch.as_tensor(lengths)
    j = torch.arange(T, device=lengths.device)
    keys = j[None, :] < lengths[:, None]
    mask = (keys[:, :, None] & keys[:, None, :])[:, None]
    if causal:
        mask = mask & torch.tril(torch.ones(T, T, dtype=torch.bool, device=lengths.device))
    return mask.clone()
