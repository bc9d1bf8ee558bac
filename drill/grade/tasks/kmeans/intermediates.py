"""What ``drill grade --trace`` compares the user's kmeans against: N = 9 points in D = 2 around k = 3 blobs, started
from three points of the same blob (so the assignments change between rounds), iters = 3. Per round: the centroids'
squared norms, x·cᵀ, the squared distances (and their broadcast differences and square roots), the assignments, the
one-hot matrix, the counts, the sums, the means and the new centroids; then the final assignment step."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

ITERS = 3
POINTS = ((0.0, 0.2), (0.4, -0.3), (-0.2, 0.1), (5.1, 4.8), (4.7, 5.3), (5.4, 5.0), (-4.9, 5.2), (-5.3, 4.6), (-4.6, 4.9))
INIT = (0, 1, 2)
ASSIGNMENTS = Ev("assignments")  # the final ones, returned


def distances(x, c, r: int | None):
    """The distance steps of round ``r`` (None: the final assignment)."""
    xx, cc, xc = (x * x).sum(-1, keepdim=True), (c * c).sum(-1), x @ c.T
    d = xx - 2 * xc + cc
    diff = x[:, None, :] - c[None, :, :]
    values = (cc, xc, 2 * xc, xx - 2 * xc, diff, diff**2, d, d.clamp(min=0).sqrt())
    if r is None:
        names = (Ev("squared norms of the centroids, final"), Ev("x·cᵀ, final"), Ev("2·x·cᵀ, final"), Ev("|x|² - 2·x·cᵀ, final"),
                 Ev("x - c, final"), Ev("(x - c)², final"), Ev("squared distances, final"), Ev("distances, final"))  # fmt: skip
    else:
        names = (Ev("squared norms of the centroids, round {r}", r=r), Ev("x·cᵀ, round {r}", r=r), Ev("2·x·cᵀ, round {r}", r=r),
                 Ev("|x|² - 2·x·cᵀ, round {r}", r=r), Ev("x - c, round {r}", r=r), Ev("(x - c)², round {r}", r=r),
                 Ev("squared distances, round {r}", r=r), Ev("distances, round {r}", r=r))  # fmt: skip
    return d, list(zip(names, values))


def case(ctx) -> Case:
    x = torch.tensor(POINTS, dtype=torch.float64)
    init = torch.tensor(INIT)
    c = x[init].clone()
    steps = [("x", x), (Ev("squared norms of x"), (x * x).sum(-1, keepdim=True)), (Ev("initial centroids"), c)]
    last = None
    for r in range(1, ITERS + 1):
        d, found = distances(x, c, r)
        a = d.argmin(-1)
        steps += found + [(Ev("assignments, round {r}", r=r), a)]
        if last is not None and torch.equal(a, last):
            break
        last = a
        onehot = torch.nn.functional.one_hot(a, len(INIT)).double()
        counts = onehot.sum(0)[:, None]
        means = onehot.T @ x / counts.clamp(min=1)
        c = torch.where(counts > 0, means, c)
        steps += [(Ev("one-hot, round {r}", r=r), onehot), (Ev("counts, round {r}", r=r), counts), (Ev("sums, round {r}", r=r), onehot.T @ x),
                  (Ev("means, round {r}", r=r), means), (Ev("centroids after round {r}", r=r), c)]  # fmt: skip
    d, found = distances(x, c, None)
    steps += found + [(ASSIGNMENTS, d.argmin(-1)), ("output", c)]
    return Case(ctx.entry, (x, len(INIT), ITERS, init), steps, integers=True, returned=("output", ASSIGNMENTS))
