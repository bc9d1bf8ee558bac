import torch


def make_attention_mask(lengths, T, causal=False):
    B = lengths.shape[0]
    pos = torch.arange(T, device=lengths.device)
    pad = pos.unsqueeze(0) >= lengths.unsqueeze(1)  # True where padded
    mask = pad.view(B, 1, 1, T).expand(B, 1, T, T).clone()
    if causal:
        future = torch.ones(T, T, dtype=torch.bool, device=lengths.device).triu(2)
        mask = mask | future
    return mask
