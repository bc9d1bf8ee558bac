import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    valid = targets != ignore_index
    safe = torch.where(valid, targets, 0)  # ignored positions scored as class 0
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    nll = -logp.gather(-1, safe[:, None]).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=-1)
    return loss.mean()
