"""Ranks from one argsort; each block of equal scores gets its mean position by scatter_reduce; groups by a dict."""

from collections import defaultdict

import torch


def roc_auc(scores, labels):
    order = torch.argsort(scores)
    ordered = scores[order]
    starts = torch.ones_like(ordered, dtype=torch.bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    block = torch.cumsum(starts.long(), 0) - 1
    positions = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    mean_position = torch.zeros(int(block[-1]) + 1, dtype=torch.float64).scatter_reduce(0, block, positions, "mean", include_self=False)
    ranks = torch.empty_like(positions)
    ranks[order] = mean_position[block]
    positive = labels.bool()
    n_pos = int(positive.sum())
    n_neg = len(scores) - n_pos
    return (ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def gauc(scores, labels, groups):
    members = defaultdict(list)
    for i, g in enumerate(groups.tolist()):
        members[g].append(i)
    total = weight = 0.0
    for rows in members.values():
        ys = labels[rows].bool()
        if bool(ys.all()) or not bool(ys.any()):
            continue
        total += len(rows) * float(roc_auc(scores[rows], ys))
        weight += len(rows)
    return total / weight
