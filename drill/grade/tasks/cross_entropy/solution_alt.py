import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    """Drop the ignored rows first, then index the log-probs of the targets directly."""
    C = logits.shape[-1]
    logp = (logits - torch.logsumexp(logits, dim=-1, keepdim=True)).reshape(-1, C)
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    logp, targets = logp[keep], targets[keep]
    nll = -logp[torch.arange(len(targets), device=logp.device), targets]
    smooth = -logp.sum(dim=-1) / C
    return ((1 - label_smoothing) * nll + label_smoothing * smooth).mean()
