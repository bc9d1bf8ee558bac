"""Assignments kept from inside the loop: after the last update they belong to the previous centroids."""

import torch


def kmeans(x, k, iters, init_idx):
    centroids = x[init_idx].clone()
    labels = torch.cdist(x, centroids).argmin(1)
    for _ in range(iters):
        labels = torch.cdist(x, centroids).argmin(1)
        for j in range(k):
            members = x[labels == j]
            if len(members):
                centroids[j] = members.mean(0)
    return centroids, labels
