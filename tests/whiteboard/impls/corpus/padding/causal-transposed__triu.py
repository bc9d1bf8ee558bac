import torch


def make_attention_mask(lengths, T, causal=False):
    lengths = torch.as_tensor(lengths)
    j = torch.arange(T, device=lengths.device)
    keys = j[None, :] < lengths[:, None]
    mask = keys[:, None, None, :].expand(-1, 1, T, T)
    if causal:
        mask = mask & torch.triu(torch.ones(T, T, dtype=torch.bool, device=lengths.device))
    return mask.clone()
