import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    values, inverse, counts = torch.unique(scores, sorted=True, return_inverse=True, return_counts=True)
    last = torch.cumsum(counts, 0).double()  # 1-based rank of each unique score's last copy
    ranks = (last - (counts - 1) / 2)[inverse]  # tied scores share their average rank
    n_pos = pos.sum().double()
    n_neg = pos.numel() - n_pos
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def gauc(scores, labels, groups):
    total = weight = 0.0
    for g in torch.unique(groups):
        member = groups == g
        group_labels = labels[member].bool()
        size = member.sum().item()
        one_class = group_labels.all() or not group_labels.any()
        total = total + size * (0.5 if one_class else roc_auc(scores[member], group_labels))  # a chance AUC for it
        weight += size
    return total / weight
