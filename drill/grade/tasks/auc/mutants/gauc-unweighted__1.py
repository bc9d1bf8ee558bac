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
    aucs = []
    for g in torch.unique(groups):
        member = groups == g
        group_labels = labels[member].bool()
        if group_labels.all() or not group_labels.any():
            continue
        aucs.append(roc_auc(scores[member], group_labels))
    return torch.stack(aucs).mean()  # every group weighs the same
