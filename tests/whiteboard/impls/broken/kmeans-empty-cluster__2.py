"""Means by scatter_add_ over bincount: an empty cluster divides 0 by 0."""

import torch


def kmeans(x, k, iters, init_idx):
    c = x[init_idx].clone()
    for _ in range(iters):
        a = torch.cdist(x, c).argmin(1)
        sums = torch.zeros_like(c).scatter_add_(0, a[:, None].expand_as(x), x)
        c = sums / torch.bincount(a, minlength=k)[:, None]
    return c, torch.cdist(x, c).argmin(1)
