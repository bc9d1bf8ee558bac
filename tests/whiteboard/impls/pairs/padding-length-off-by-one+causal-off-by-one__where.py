import torch


def make_attention_mask(lengths, T, causal=False):
    """Real keys taken as j < length - 1, and the causal part built with tril(diagonal=1): two separate slips."""
    B = lengths.shape[0]
    pos = torch.arange(T, device=lengths.device)
    real = torch.where(pos.unsqueeze(0) < (lengths - 1).unsqueeze(1), True, False)
    mask = real.view(B, 1, 1, T).repeat(1, 1, T, 1)
    if causal:
        mask = mask & torch.ones(T, T, dtype=torch.bool, device=lengths.device).tril(diagonal=1)
    return mask
