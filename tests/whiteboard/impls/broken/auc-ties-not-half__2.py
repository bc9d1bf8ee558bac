"""Wins counted with torch.bucketize(right=True): a negative equal to the positive counts as beaten."""

import torch


def roc_auc(scores, labels):
    y = labels.bool()
    boundaries = scores[~y].sort().values
    beaten = torch.bucketize(scores[y], boundaries, right=True)
    return beaten.double().sum() / (y.sum() * (~y).sum())


def gauc(scores, labels, groups):
    total = weight = 0.0
    for g in torch.unique(groups):
        member = groups == g
        y = labels[member].bool()
        if y.all() or not y.any():
            continue
        total = total + member.sum() * roc_auc(scores[member], y)
        weight = weight + member.sum()
    return total / weight
