"""The ``kmeans`` task: ``kmeans(x, k, iters, init_idx) -> (centroids, assignments)``.

Lloyd's algorithm from a given start: centroids ``x[init_idx]``, then up to ``iters`` rounds of "assign each point
to its nearest centroid (squared Euclidean distance, a tie to the lower index), move each centroid to the mean of
its points (an empty cluster keeps its centroid)", stopping early once the assignments no longer change; the
returned assignments are those of the returned centroids (one last assignment step, as scikit-learn's ``labels_``).
The reference is that algorithm in float64, exact for the assignments; the centroids are judged by the tolerance
rule against it and the same algorithm in the user's dtype. Data come as separated blobs (so float32 and float64
agree on every assignment), on an integer grid where ties are exact, with a start that leaves a cluster empty, and
with too few rounds to converge. Stopping early is a fixed point, invisible in the result, so it is not graded.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

N, D, K = 40, 3, 4


@dataclass(frozen=True)
class KMeansVariant:
    distance: str = "full"  # full (correct) | no-cross: |x|² + |c|² without -2 x·c
    pick: str = "argmin"  # argmin (correct) | argmax
    ties: str = "lower"  # lower (correct) | higher: a tie goes to the higher centroid index
    empty: str = "keep"  # keep (correct) | nan: the mean of no point | zero: the sum over a count clamped to 1
    final: str = "reassign"  # reassign (correct) | last: the assignments of the last update, not of the returned centroids


CORRECT_KMEANS = KMeansVariant()


def assign(x, c, variant: KMeansVariant):
    cross = 0 if variant.distance == "no-cross" else 2 * x @ c.T
    d = (x * x).sum(-1, keepdim=True) - cross + (c * c).sum(-1)
    if variant.pick == "argmax":
        return d.argmax(-1)
    if variant.ties == "higher":
        return c.shape[0] - 1 - d.flip(-1).argmin(-1)
    return d.argmin(-1)


def update(x, a, c, variant: KMeansVariant):
    onehot = torch.nn.functional.one_hot(a, c.shape[0]).to(x.dtype)  # [N, K]
    counts = onehot.sum(0)[:, None]
    sums = onehot.T @ x
    if variant.empty == "nan":
        return sums / counts
    if variant.empty == "zero":
        return sums / counts.clamp(min=1)
    return torch.where(counts > 0, sums / counts.clamp(min=1), c)


def reference(x, k, iters, init_idx, variant: KMeansVariant = CORRECT_KMEANS):
    c = x[init_idx].clone()
    last = None
    for _ in range(iters):
        a = assign(x, c, variant)
        if last is not None and torch.equal(a, last):
            break
        last = a
        c = update(x, a, c, variant)
    if variant.final == "last" and last is not None:
        return c, last
    return c, assign(x, c, variant)


def blobs(ctx: Context, offset: int, n: int = N, d: int = D, k: int = K, spread: float = 0.6):
    """float64 points around k centres 4 apart (plus k - 1 more centres' worth of overlap), and a start of k distinct points."""
    gen = ctx.generator(offset)
    centres = 4 * torch.randn(k, d, generator=gen, dtype=torch.float64)
    x = centres[torch.arange(n) % k] + spread * torch.randn(n, d, generator=gen, dtype=torch.float64)
    x = x[torch.randperm(n, generator=gen)]
    init = torch.randperm(n, generator=gen)[:k]
    return x, init


def grid(ctx: Context, offset: int):
    """Points on an integer grid, some exactly halfway between two starting centroids: ties are exact in any dtype."""
    gen = ctx.generator(offset)
    x = torch.randint(-3, 4, (23, 2), generator=gen).double()
    x[:4] = torch.tensor([[0.0, 0.0], [2.0, 0.0], [1.0, 0.0], [1.0, 5.0]])  # 2 and 3 are equidistant from 0 and 1
    return x, torch.tensor([0, 1, 4])


def empty_start(ctx: Context, offset: int):
    """Blobs started from a duplicated point: the higher copy wins no tie, so its cluster is empty from the first round."""
    x, init = blobs(ctx, offset, 31, 2, 3)
    return x, torch.tensor([int(init[0]), int(init[1]), int(init[0])])


def run(ctx: Context, x, k, iters, init_idx):
    ret = ctx.call(ctx.entry, x, k, iters, init_idx)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(t, torch.Tensor) for t in ret)):
        raise WrongShape(Ev("returned {type}, not (centroids, assignments), two tensors", type=type(ret).__name__))
    centroids, assignments = ret
    if tuple(centroids.shape) != (k, x.shape[1]):
        raise WrongShape(Ev("centroids has shape {shape}, expected {expected}", shape=list(centroids.shape), expected=[k, x.shape[1]]))
    if tuple(assignments.shape) != (x.shape[0],):
        raise WrongShape(Ev("assignments has shape {shape}, expected {expected}", shape=list(assignments.shape), expected=[x.shape[0]]))
    if assignments.is_floating_point() or assignments.dtype == torch.bool:
        raise WrongShape(Ev("assignments has dtype {dtype}, expected an integer dtype (cluster ids)", dtype=str(assignments.dtype)))
    return centroids, assignments


def compare(ctx: Context, label: Ev, x, k, iters, init_idx, dtype):
    truth_c, truth_a = reference(x, k, iters, init_idx)
    same_c, _ = reference(x.to(dtype), k, iters, init_idx)
    centroids, assignments = run(ctx, x.to(dtype).to(ctx.device), k, iters, init_idx.to(ctx.device))
    wrong = (assignments.cpu().long() != truth_a).nonzero().reshape(-1)
    if len(wrong):
        i = int(wrong[0])
        return outcome("fail", Ev("{label}: {n} of {total} points assigned differently, point {i} to {got} instead of {expected}",
                                  label=label, n=len(wrong), total=len(truth_a), i=i, got=int(assignments[i]), expected=int(truth_a[i])))  # fmt: skip
    if not torch.isfinite(centroids).all():
        j = int((~torch.isfinite(centroids)).any(-1).nonzero()[0])
        code = ("kmeans-empty-cluster",) if not (assignments.cpu().long() == j).any() else ()
        got, expected = centroids[j].tolist(), truth_c[j].tolist()
        if code:
            return outcome("fail", Ev("{label}: centroid {j} is {got}, expected {expected}: its cluster is empty, and an empty cluster "
                                      "keeps its centroid", label=label, j=j, got=got, expected=expected), *code)  # fmt: skip
        return outcome("fail", Ev("{label}: centroid {j} is {got}, expected {expected}", label=label, j=j, got=got, expected=expected))
    result = against_truth([(Ev("centroids ({label})", label=label), centroids.cpu(), truth_c, same_c)])
    if result.status == "pass":
        result.message = Ev("{label}: every assignment exact, centroids {what}", label=label, what=result.message)
    return result


def shape_check(ctx: Context):
    x, init = blobs(ctx, 1)
    centroids, _ = run(ctx, x.float().to(ctx.device), K, 10, init.to(ctx.device))
    if centroids.dtype != torch.float32:
        return outcome("fail", Ev("centroids dtype is {dtype}, the points' is torch.float32", dtype=str(centroids.dtype)))
    return outcome("pass", Ev("centroids [{k}, {d}] and assignments [{n}] from {n} points", k=K, d=D, n=N))


def blob_check(ctx: Context, offset: int, iters: int, n=N, d=D, k=K, dtype=torch.float32):
    x, init = blobs(ctx, 100 + offset, n, d, k)
    return compare(ctx, Ev("N={n}, D={d}, k={k}, iters={iters}, {dtype}", n=n, d=d, k=k, iters=iters, dtype=str(dtype)[6:]), x, k, iters, init, dtype)


def tie_check(ctx: Context):
    x, init = grid(ctx, 200)
    return compare(ctx, Ev("integer grid, points exactly halfway between two centroids, iters=5"), x, 3, 5, init, torch.float32)


def empty_check(ctx: Context):
    x, init = empty_start(ctx, 300)
    label = Ev("a start whose third centroid duplicates the first (its cluster stays empty), iters=10")
    return compare(ctx, label, x, 3, 10, init, torch.float32)


@dataclass(frozen=True)
class Probe:
    x: torch.Tensor
    k: int
    iters: int
    init: torch.Tensor

    def user(self, ctx: Context):
        try:
            c, a = run(ctx, self.x.clone(), self.k, self.iters, self.init.clone())
        except WrongShape:
            return None
        return torch.cat([c.detach().double().reshape(-1), a.double()])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct k-means" here.
        variant = variant if isinstance(variant, KMeansVariant) else CORRECT_KMEANS
        c, a = reference(self.x, self.k, self.iters, self.init, variant)
        return torch.cat([c.reshape(-1), a.double()])


HYPOTHESES = (
    ("kmeans-distance-no-cross-term", KMeansVariant(distance="no-cross")),
    ("kmeans-argmax", KMeansVariant(pick="argmax")),
    ("kmeans-ties-to-higher-index", KMeansVariant(ties="higher")),
    ("kmeans-empty-cluster", KMeansVariant(empty="nan")),
    ("kmeans-empty-cluster", KMeansVariant(empty="zero")),
    ("kmeans-stale-assignments", KMeansVariant(final="last")),
)


class KMeansTask:
    name = "kmeans"

    def checks(self, ctx: Context) -> list[CheckDef]:
        n, d, k = ctx.sizes(50, (20, 90), (2, 7), (2, 6), avoid=(32, 64))
        defs = [
            CheckDef("shape.basic", "shape", partial(shape_check, ctx)),
            CheckDef("numerical.converged", "numerical", partial(blob_check, ctx, 0, 50)),
            CheckDef("numerical.two-rounds", "numerical", partial(blob_check, ctx, 1, 2, 60, 2, 5)),
            CheckDef("numerical.no-rounds", "numerical", partial(blob_check, ctx, 2, 0)),
            CheckDef("numerical.drawn", "numerical", partial(blob_check, ctx, 3, 30, n, d, k)),
            CheckDef("numerical.float64", "numerical", partial(blob_check, ctx, 4, 20, 45, 5, 3, torch.float64)),
            CheckDef("numerical.ties", "numerical", partial(tie_check, ctx)),
        ]
        for dtype in ctx.dtypes[1:]:
            defs.append(CheckDef(dtype_id("numerical", dtype), "numerical", partial(blob_check, ctx, 5, 20, dtype=dtype)))
        x, init = blobs(ctx, 600)
        x = x.float().to(ctx.device)
        init = init.to(ctx.device)
        return defs + [
            CheckDef("stability.empty-cluster", "stability", partial(empty_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, x, K, 10, init), {"x": x, "init_idx": init})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        x1, i1 = blobs(ctx, 1100, 37, 3, 4, spread=1.5)
        x2, i2 = grid(ctx, 1101)
        x3, i3 = empty_start(ctx, 1102)
        return [Probe(x1, 4, 2, i1), Probe(x2, 3, 4, i2), Probe(x3, 3, 6, i3)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = KMeansTask()
