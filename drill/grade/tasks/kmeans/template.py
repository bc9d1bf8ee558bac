import torch


def kmeans(x, k, iters, init_idx):
    """k-means (Lloyd's algorithm) from a given start.

    x: [N, D] float points; k: the number of clusters; iters: the most assignment + update rounds;
    init_idx: [k] int64, the initial centroids are x[init_idx]
    returns (centroids, assignments):
        centroids: [k, D] in x's dtype; assignments: [N] int64, the nearest centroid of each point
        (squared Euclidean distance, computed vectorised; a tie goes to the lower centroid index)
    Each round: assign every point, then move each centroid to the mean of its points; an empty
    cluster keeps its centroid. Stop early when the assignments stop changing. The returned
    assignments are those of the returned centroids.
    Rules: do not modify the inputs; no sklearn.
    """
    raise NotImplementedError
