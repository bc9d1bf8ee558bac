import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    C = logits.shape[-1]
    logp = (logits - torch.logsumexp(logits, dim=-1, keepdim=True)).reshape(-1, C)
    t = targets.reshape(-1)
    valid = t != ignore_index
    nll = -logp.gather(-1, torch.where(valid, t, 0)[:, None]).squeeze(-1)
    others = -logp.sum(dim=-1) - nll  # the uniform part leaves the target class out
    loss = (1 - label_smoothing) * nll + label_smoothing * others / C
    return (loss * valid).sum() / valid.sum()
