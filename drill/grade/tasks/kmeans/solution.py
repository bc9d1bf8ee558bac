import torch


def kmeans(x, k, iters, init_idx):
    centroids = x[init_idx].clone()

    def nearest(c):
        d = (x * x).sum(-1, keepdim=True) - 2 * x @ c.T + (c * c).sum(-1)  # [N, k] squared distances
        return d.argmin(dim=-1)  # the first minimum: ties go to the lower index

    previous = None
    for _ in range(iters):
        assignments = nearest(centroids)
        if previous is not None and torch.equal(assignments, previous):
            break
        previous = assignments
        onehot = torch.nn.functional.one_hot(assignments, k).to(x.dtype)  # [N, k]
        counts = onehot.sum(0)[:, None]
        means = onehot.T @ x / counts.clamp(min=1)
        centroids = torch.where(counts > 0, means, centroids)  # an empty cluster keeps its centroid
    return centroids, nearest(centroids)
