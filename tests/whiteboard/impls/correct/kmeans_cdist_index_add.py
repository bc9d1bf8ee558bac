"""torch.cdist for the distances, index_add_ and bincount for the means, a while loop that stops on no change."""

import torch


def kmeans(x, k, iters, init_idx):
    centroids = x[init_idx].clone()
    assignments = torch.cdist(x, centroids).argmin(dim=1)
    rounds = 0
    while rounds < iters:
        counts = torch.bincount(assignments, minlength=k)
        sums = torch.zeros_like(centroids).index_add_(0, assignments, x)
        filled = counts > 0
        centroids = centroids.clone()
        centroids[filled] = sums[filled] / counts[filled, None].to(x.dtype)
        rounds += 1
        new = torch.cdist(x, centroids).argmin(dim=1)
        if torch.equal(new, assignments):
            break
        assignments = new
    return centroids, assignments
