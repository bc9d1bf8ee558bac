import torch
import torch.nn.functional as F


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    C = logits.size(-1)
    logits = logits.reshape(-1, C)
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    logp = F.log_softmax(logits, dim=-1)
    safe = targets.clone()
    safe[~keep] = 0
    # smoothed target: 1-eps on the label, eps/(C-1) spread over the other classes
    dist = torch.full_like(logp, label_smoothing / (C - 1))
    dist.scatter_(1, safe.unsqueeze(1), 1.0 - label_smoothing)
    per_row = -(dist * logp).sum(dim=-1)
    per_row = per_row * keep
    return per_row.sum() / targets.numel()
