"""Counting form: for each positive, the negatives below it plus half of those equal to it (two binary searches)."""

import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    negatives = torch.sort(scores[~pos]).values
    at_or_below = torch.searchsorted(negatives, scores[pos], right=True)
    below = torch.searchsorted(negatives, scores[pos], right=False)
    wins = (at_or_below + below).sum() / 2
    return wins / (pos.sum() * (~pos).sum())


def gauc(scores, labels, groups):
    order = torch.argsort(groups, stable=True)
    ids, counts = torch.unique_consecutive(groups[order], return_counts=True)
    total = weight = 0.0
    for chunk in torch.split(order, counts.tolist()):
        group_labels = labels[chunk].bool()
        if bool(group_labels.all()) or not bool(group_labels.any()):
            continue
        total += len(chunk) * roc_auc(scores[chunk], group_labels).item()
        weight += len(chunk)
    return total / weight
