import torch


def _average_ranks(scores):
    values, inverse, counts = torch.unique(scores, sorted=True, return_inverse=True, return_counts=True)
    return (torch.cumsum(counts, 0).double() - (counts - 1) / 2)[inverse]


def roc_auc(scores, labels):
    pos = labels.bool()
    ranks = _average_ranks(scores)
    n_pos = pos.sum().double()
    n_neg = pos.numel() - n_pos
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def gauc(scores, labels, groups):
    ranks = _average_ranks(scores)  # ranked once over every group: other groups' samples shift the ranks
    total = weight = 0.0
    for g in torch.unique(groups):
        member = groups == g
        pos = labels[member].bool()
        if pos.all() or not pos.any():
            continue
        n_pos, size = pos.sum().double(), member.sum().item()
        auc = (ranks[member][pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (size - n_pos))
        total = total + size * auc
        weight += size
    return total / weight
