import torch


def make_attention_mask(lengths, T, causal=False):
    mask = torch.zeros(len(lengths), 1, T, T, dtype=torch.bool, device=lengths.device)
    for b, n in enumerate(lengths.tolist()):
        for i in range(T):
            last = min(n, i + 1) if causal else n
            mask[b, 0, i, :last] = True
    return mask
