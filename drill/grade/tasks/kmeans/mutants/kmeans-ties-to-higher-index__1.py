import torch


def kmeans(x, k, iters, init_idx):
    centroids = x[init_idx].clone()

    def nearest(c):
        best = torch.full((x.shape[0],), float("inf"), dtype=x.dtype, device=x.device)
        index = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)
        for j in range(c.shape[0]):
            d = ((x - c[j]) ** 2).sum(-1)
            closer = d <= best  # <=: a tie moves the point to the later centroid
            best = torch.where(closer, d, best)
            index = torch.where(closer, j, index)
        return index

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
