import torch


def roc_auc(scores, labels):
    """ROC AUC: the probability that a random positive scores above a random negative.

    scores: [n] float; labels: [n] bool or 0/1 integers, both classes present
    returns: a Python float or a 0-d tensor; a tie between a positive and a negative counts one half
             (the Mann-Whitney U statistic divided by n_pos * n_neg, as sklearn's roc_auc_score)
    Rules: O(n log n); never build an [n_pos, n_neg] (or any O(n^2)) tensor; do not modify the inputs.
    """
    raise NotImplementedError


def gauc(scores, labels, groups):
    """Group AUC: the AUC of each group (e.g. one user's impressions), averaged with weights = group size.

    scores: [n] float; labels: [n] bool or 0/1; groups: [n] integer group ids (any values, in any order)
    returns: a Python float or a 0-d tensor: sum_g n_g * AUC_g / sum_g n_g over the groups that hold both
             classes (a group with one class has no AUC: skip it, weight included)
    Rules: do not modify the inputs.
    """
    raise NotImplementedError
