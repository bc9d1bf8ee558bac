import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    valid = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp(min=0)[:, None]).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=-1)
    return (loss * valid).mean()  # divides by every position, ignored ones too
