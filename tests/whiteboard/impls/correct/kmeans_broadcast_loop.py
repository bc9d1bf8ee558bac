"""Broadcast differences [N, k, D] for the distances, a Python loop over the k clusters for the means."""

import torch


def kmeans(x, k, iters, init_idx):
    c = x[init_idx].clone()
    previous = None
    for _ in range(iters):
        labels = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1).argmin(-1)
        if previous is not None and bool((labels == previous).all()):
            break
        previous = labels
        c = torch.stack([x[labels == j].mean(0) if bool((labels == j).any()) else c[j] for j in range(k)])
    return c, ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1).argmin(-1)
