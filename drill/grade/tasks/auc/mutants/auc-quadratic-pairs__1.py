import torch


def roc_auc(scores, labels):
    pos = labels.bool()
    diff = scores[pos][:, None] - scores[~pos][None, :]  # [n_pos, n_neg]: O(n^2) memory
    return ((diff > 0).double() + 0.5 * (diff == 0).double()).mean()


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
