import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    """As a soft-target cross-entropy: q = (1 - eps) * one_hot + eps / C, loss = -sum(q * log p)."""
    C = logits.shape[-1]
    x = logits.reshape(-1, C)
    t = targets.reshape(-1)
    valid = t != ignore_index
    m = x.max(dim=-1, keepdim=True).values
    logp = x - m - torch.log(torch.exp(x - m).sum(dim=-1, keepdim=True))
    q = torch.zeros_like(logp).scatter_(1, torch.where(valid, t, 0)[:, None], 1.0)
    q = q * (1 - label_smoothing) + label_smoothing / C
    loss = -(q * logp).sum(dim=-1)
    return torch.where(valid, loss, torch.zeros_like(loss)).sum() / valid.sum()
