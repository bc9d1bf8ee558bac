"""A dict of per-user AUCs, averaged with equal weight (the per-user mean, not GAUC)."""

import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    order = torch.argsort(scores)
    s = scores[order]
    ranks = torch.empty_like(s, dtype=torch.float64)
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        ranks[i:j] = (i + 1 + j) / 2
        i = j
    r = torch.empty_like(ranks)
    r[order] = ranks
    p = int(pos.sum())
    return (r[pos].sum().item() - p * (p + 1) / 2) / (p * (len(s) - p))


def gauc(scores, labels, groups):
    per_user = {}
    for g in groups.unique().tolist():
        m = groups == g
        if 0 < int(labels[m].sum()) < int(m.sum()):
            per_user[g] = roc_auc(scores[m], labels[m])
    return sum(per_user.values()) / len(per_user)
