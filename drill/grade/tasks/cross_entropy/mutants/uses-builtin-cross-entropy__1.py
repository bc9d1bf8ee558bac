import torch.nn.functional as F


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=ignore_index, label_smoothing=label_smoothing)
