import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    C = logits.shape[-1]
    logits = logits.reshape(-1, C)
    targets = targets.reshape(-1)
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    valid = targets != ignore_index
    one_hot = torch.nn.functional.one_hot(targets.clamp(min=0), C).to(logp.dtype)
    q = one_hot * (1 - label_smoothing) + (1 - one_hot) * label_smoothing / (C - 1)  # eps over the other classes
    loss = -(q * logp).sum(dim=-1)
    return (loss * valid).sum() / valid.sum()
