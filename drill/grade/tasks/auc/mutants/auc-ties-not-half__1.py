import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    negatives = torch.sort(scores[~pos]).values
    at_or_below = torch.searchsorted(negatives, scores[pos], right=True)  # ties counted as wins
    return at_or_below.sum().double() / (pos.sum() * (~pos).sum())


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
