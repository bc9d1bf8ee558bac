import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    C = logits.shape[-1]
    logits = logits.reshape(-1, C)
    targets = targets.reshape(-1)
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    valid = targets != ignore_index
    safe = torch.where(valid, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, safe[:, None]).squeeze(1)
    smooth = -(logp.sum(dim=-1) - logp.gather(1, safe[:, None]).squeeze(1)) / (C - 1)
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth
    return (loss * valid).sum() / valid.sum()
