import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    """Mean cross-entropy of logits against class targets, written by hand (as F.cross_entropy).

    logits: [N, C] or [B, T, C]   targets: int64 [N] or [B, T]; a target equal to ignore_index is skipped
    returns: a 0-dim tensor, the mean over the non-ignored targets of
        (1 - label_smoothing) * (-log p[target]) + label_smoothing * mean over the C classes of (-log p[c])
    with p = softmax(logits) over the class dim. Stable for any logits (think log-sum-exp).
    Rules: no F.cross_entropy / F.nll_loss, do not modify the inputs.
    """
    raise NotImplementedError
