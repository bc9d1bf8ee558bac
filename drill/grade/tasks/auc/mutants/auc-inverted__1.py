import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    values, inverse, counts = torch.unique(scores, sorted=True, return_inverse=True, return_counts=True)
    last = torch.cumsum(counts, 0).double()
    ranks = (last - (counts - 1) / 2)[inverse]
    n_pos = pos.sum().double()
    n_neg = pos.numel() - n_pos
    return (ranks[~pos].sum() - n_neg * (n_neg + 1) / 2) / (n_pos * n_neg)  # the negatives' rank sum


def gauc(scores, labels, groups):
    total = weight = 0.0
    for g in torch.unique(groups):
        member = groups == g
        group_labels = labels[member].bool()
        if group_labels.all() or not group_labels.any():
            continue
        size = member.sum().item()
        total = total + size * roc_auc(scores[member], group_labels)
        weight += size
    return total / weight
