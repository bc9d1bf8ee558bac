import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    logp = torch.log_softmax(logits, dim=1)
    valid = targets != ignore_index
    t = targets.clamp(min=0)
    nll = -logp.gather(-1, t.unsqueeze(-1)).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(-1)
    return loss[valid].mean()
