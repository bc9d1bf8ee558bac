import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    logp = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()  # log-softmax via log-sum-exp
    valid = targets != ignore_index
    nll = -logp.gather(-1, torch.where(valid, targets, 0)[:, None]).squeeze(-1)
    loss = (1 - label_smoothing) * nll + label_smoothing * -logp.mean(dim=-1)
    return (loss * valid).sum() / valid.sum()
