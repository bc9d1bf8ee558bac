"""The ``topk_retrieval`` task: ``topk_cosine(queries, docs, k, chunk_size=None) -> (scores, indices)``.

Cosine similarity of every query with every document, the k best per query in descending order, ties to the lower
document index (a stable sort; ``torch.topk`` does not promise it, and on CPU breaks ties otherwise). With
``chunk_size`` the documents are scored a chunk at a time and merged into a running top-k: the memory rule watches
the largest tensor the call makes, which must stay far below the [Q, N] score matrix. The reference is float64.

Indices are judged by what they point at: the float64 cosine of each returned document must be the reference's
score at that rank (so near-ties in float32 never fail a right file), and where the reference has exact ties
(documents on a lattice of ±0.5 entries, whose dot products are exact in any summation order) the indices must be
exactly the reference's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

MEMORY = (37, 901, 6, 5, 64)  # Q, N, D, k, chunk_size: Q x N = 33337 elements, far above any chunked tensor


@dataclass(frozen=True)
class TopkVariant:
    normalise: str = "both"  # both (correct) | none: raw dot products | docs | queries: one side only | dim0: over the rows
    merge: str = "resort"  # resort (correct) | concat: per-chunk top-k concatenated in chunk order, the first k kept
    # descending (correct) | ascending: the k best, worst first | bottom: an ascending sort cut to its first k, the k
    # worst documents (descending=True forgotten)
    order: str = "descending"


CORRECT_TOPK = TopkVariant()


def cosine(queries, docs, variant: TopkVariant = CORRECT_TOPK):
    q, d = queries, docs
    if variant.normalise in ("both", "queries"):
        q = q / q.norm(dim=-1, keepdim=True)
    if variant.normalise in ("both", "docs"):
        d = d / d.norm(dim=-1, keepdim=True)
    if variant.normalise == "dim0":
        q, d = q / q.norm(dim=0, keepdim=True), d / d.norm(dim=0, keepdim=True)
    return q @ d.T


def stable_topk(scores, k, largest: bool = True):
    """The k best per row, descending, equal scores by index (a stable sort); the k worst, ascending, if not largest."""
    order = torch.sort(scores, dim=-1, descending=largest, stable=True).indices[..., :k]
    return scores.gather(-1, order), order


def reference(queries, docs, k, chunk_size=None, variant: TopkVariant = CORRECT_TOPK):
    scores, largest = cosine(queries, docs, variant), variant.order != "bottom"
    if variant.merge == "concat" and chunk_size:
        parts = [stable_topk(scores[:, s : s + chunk_size], min(k, scores[:, s : s + chunk_size].shape[1]), largest)
                 for s in range(0, scores.shape[1], chunk_size)]
        top = torch.cat([p[0] for p in parts], 1)[:, :k]
        ids = torch.cat([p[1] + i * chunk_size for i, p in enumerate(parts)], 1)[:, :k]
    else:
        top, ids = stable_topk(scores, k, largest)
    if variant.order == "ascending":
        top, ids = top.flip(-1), ids.flip(-1)
    return top, ids


def make_inputs(ctx: Context, offset: int, q: int, n: int, d: int, dtype=torch.float64):
    """Gaussian rows of different norms (a missing normalisation changes the ranking)."""
    gen = ctx.generator(offset)
    queries = ctx.randn(q, d, gen=gen, dtype=dtype) * (0.2 + 3 * torch.rand(q, 1, generator=gen, dtype=torch.float64)).to(ctx.device, dtype)
    docs = ctx.randn(n, d, gen=gen, dtype=dtype) * (0.2 + 3 * torch.rand(n, 1, generator=gen, dtype=torch.float64)).to(ctx.device, dtype)
    return queries, docs


def lattice(ctx: Context, offset: int, q: int, n: int, d: int):
    """Rows with four entries of ±0.5 and zeros elsewhere: unit norm exactly, every cosine a multiple of 0.25, so
    many documents tie exactly, in any precision and summation order."""
    gen = ctx.generator(offset)

    def rows(m):
        out = torch.zeros(m, d, dtype=torch.float64)
        for r in range(m):
            cols = torch.randperm(d, generator=gen)[:4]
            out[r, cols] = 0.5 * (2 * torch.randint(0, 2, (4,), generator=gen) - 1).double()
        return out.to(ctx.device)

    return rows(q), rows(n)


def run(ctx: Context, queries, docs, k, chunk_size=None):
    kwargs = {} if chunk_size is None else {"chunk_size": chunk_size}
    ret = ctx.call(ctx.entry, queries, docs, k, **kwargs)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(t, torch.Tensor) for t in ret)):
        raise WrongShape(Ev("returned {type}, not a (scores, indices) pair of tensors", type=type(ret).__name__))
    scores, ids = ret
    expect_shape(scores, (queries.shape[0], k), "scores")
    expect_shape(ids, (queries.shape[0], k), "indices")
    return scores, ids


def indices_verdict(what: Ev, full, ids, truth_scores, truth_ids, tol: float):
    """Each returned index must point at a document whose float64 cosine is the reference's score at that rank,
    no index twice; where that score is tied exactly with another document, the index must be the reference's."""
    if ids.dtype != torch.int64:
        return outcome("fail", Ev("{what}: indices dtype is {dtype}, expected torch.int64", what=what, dtype=str(ids.dtype)))
    n = full.shape[1]
    if ids.numel() and (ids.min() < 0 or ids.max() >= n):
        return outcome("fail", Ev("{what}: an index is outside 0..{last}", what=what, last=n - 1))
    picked = full.gather(1, ids.to(full.device))
    off = (picked - truth_scores).abs() > tol
    if off.any():
        r, c = (int(i) for i in off.nonzero()[0])
        return outcome("fail", Ev("{what}: query {r}, rank {c}: index {index} has cosine {cosine:.6g}, the rank-{c} document is {doc} "
                                  "with {score:.6g}", what=what, r=r, c=c, index=int(ids[r, c]), cosine=picked[r, c].item(),
                                  doc=int(truth_ids[r, c]), score=truth_scores[r, c].item()))  # fmt: skip
    if (ids.sort(dim=1).values.diff(dim=1) == 0).any():
        r = int((ids.sort(dim=1).values.diff(dim=1) == 0).any(dim=1).nonzero()[0])
        return outcome("fail", Ev("{what}: query {r} gets the same document twice: {ids}", what=what, r=r, ids=ids[r].tolist()))
    tied = (full[:, None, :] == truth_scores[:, :, None]).sum(-1) > 1  # [Q, k]: that rank's score is held by 2+ documents
    wrong = tied & (ids.to(truth_ids.device) != truth_ids)
    if wrong.any():
        r, c = (int(i) for i in wrong.nonzero()[0])
        holders = (full[r] == truth_scores[r, c]).nonzero().flatten().tolist()
        return outcome("fail", Ev("{what}: query {r}, rank {c}: documents {holders} tie at {score:g}; ranks go to the lower index first, "
                                  "so rank {c} is {expected}, yours {got}", what=what, r=r, c=c, holders=holders[:6],
                                  score=truth_scores[r, c].item(), expected=int(truth_ids[r, c]), got=int(ids[r, c])),
                       "topk-ties-not-lowest-index")  # fmt: skip
    return None


def numerical_check(ctx: Context, offset: int, dims, k: int, chunk_size=None, dtype=torch.float32, lattice_inputs: bool = False):
    queries, docs = lattice(ctx, 100 + offset, *dims) if lattice_inputs else make_inputs(ctx, 100 + offset, *dims)
    truth, truth_ids = reference(queries, docs, k)
    same, _ = reference(queries.to(dtype), docs.to(dtype), k)
    scores, ids = run(ctx, queries.to(dtype), docs.to(dtype), k, chunk_size)
    sizes = f"Q={dims[0]}, N={dims[1]}, D={dims[2]}, k={k}" + (f", chunk_size={chunk_size}" if chunk_size else "")
    what = (Ev("{sizes}, ties=exact, {dtype}", sizes=sizes, dtype=str(dtype)[6:]) if lattice_inputs
            else Ev("{sizes}, {dtype}", sizes=sizes, dtype=str(dtype)[6:]))  # fmt: skip
    if scores.dtype != dtype:
        return outcome("fail", Ev("{what}: scores dtype is {dtype}, the queries' is {expected}", what=what, dtype=str(scores.dtype),
                                  expected=str(dtype)))  # fmt: skip
    result = against_truth([(Ev("{name} ({what})", name="scores", what=what), scores, truth, same)])
    if result.status != "pass":
        return result
    tol = {torch.float64: 1e-9, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    found = indices_verdict(what, cosine(queries, docs), ids, truth, truth_ids, tol)
    if found is None:
        result.message = Ev("{what}: indices right, scores {summary}", what=what, summary=result.message)
    return found or result


def memory_check(ctx: Context):
    q, n, d, k, chunk = MEMORY
    queries, docs = make_inputs(ctx, 300, q, n, d, torch.float32)
    limit = max(n * d, 2 * q * (chunk + k), q * k * math.ceil(n / chunk))  # the normalised docs, a chunk with the kept k
    _, (size, shape, op) = ctx.largest(ctx.entry, queries, docs, k, chunk_size=chunk)
    if size > limit:
        return outcome("fail", Ev("Q={q}, N={n}, chunk_size={chunk}: {op} produced a tensor of shape {shape} ({size} elements); chunked "
                                  "scoring needs at most {limit} (a chunk's Q x chunk_size scores with the kept k, or the docs), the "
                                  "whole Q x N matrix is {whole}", q=q, n=n, chunk=chunk, op=str(op), shape=list(shape), size=size,
                                  limit=limit, whole=q * n), "topk-materialises-scores")  # fmt: skip
    return outcome("pass", Ev("Q={q}, N={n}, chunk_size={chunk}: largest tensor {size} elements (the Q x N matrix would be {whole})",
                              q=q, n=n, chunk=chunk, size=size, whole=q * n))  # fmt: skip


def gradient_check(ctx: Context):
    """d sum(scores * seed) / d queries and d docs, chunked: the gradient flows to the k picked documents only."""
    queries, docs = make_inputs(ctx, 200, 5, 33, 6)
    _, truth_ids = reference(queries, docs, 4)
    leaves = [t.float().requires_grad_() for t in (queries, docs)]
    scores, ids = run(ctx, *leaves, 4, 8)
    if not torch.equal(ids.cpu(), truth_ids.cpu()):
        return outcome("skip", Ev("the indices differ from the reference: the numerical checks say how"))
    seed = ctx.randn(*scores.shape, gen=ctx.generator(201), dtype=torch.float64)
    ctx.call(lambda: (scores * seed.float()).sum().backward(), watch=False)
    if any(leaf.grad is None for leaf in leaves):
        return outcome("fail", Ev("no gradient reaches the queries or the docs (are the scores detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        refs = [t.to(precision).requires_grad_() for t in (queries.float(), docs.float())]
        (reference(*refs, 4)[0] * seed.to(precision)).sum().backward()
        grads.append([r.grad for r in refs])
    return against_truth([(Ev("{name} ({what})", name=name, what="chunk_size=8"), leaf.grad, grads[0][i], grads[1][i])
                          for i, (name, leaf) in enumerate(zip(("dqueries", "ddocs"), leaves))])  # fmt: skip


def query_independence_check(ctx: Context):
    """float64: changing one query changes only its own row of scores and indices."""
    queries, docs = make_inputs(ctx, 450, 5, 21, 6)
    base, base_ids = run(ctx, queries, docs, 4)
    gen = ctx.generator(451)
    for i in range(queries.shape[0]):
        moved = queries.clone()
        moved[i] = 2.5 * ctx.randn(queries.shape[1], gen=gen, dtype=torch.float64)
        scores, ids = run(ctx, moved, docs, 4)
        change = (scores - base).abs().amax(dim=1)
        change[i] = 0
        other = ((change > 1e-12) | (ids != base_ids).any(dim=1)) & (torch.arange(len(change), device=change.device) != i)
        if other.any():
            j = int(other.nonzero()[0])
            return outcome("fail", Ev("changing query {i} moved the results of query {j} (by {change:.3g}): each query's top-k must depend "
                                      "on that query alone", i=i, j=j, change=change[j].item()), "topk-normalised-wrong-dim")  # fmt: skip
    return outcome("pass", Ev("each of the {n} queries' results depends on that query alone (float64)", n=queries.shape[0]))


def gradient_free_check(ctx: Context):
    """float64, no chunking: the same call twice gives the same answer (no state kept between calls)."""
    queries, docs = make_inputs(ctx, 400, 6, 23, 5)
    first = run(ctx, queries, docs, 4, 5)
    second = run(ctx, queries, docs, 4, 5)
    if not (torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])):
        return outcome("fail", Ev("two identical calls give different results: state kept between calls?"))
    return outcome("pass", Ev("two identical calls give identical results"))


@dataclass(frozen=True)
class Probe:
    """float64: the scores, then the indices (as floats)."""

    queries: torch.Tensor
    docs: torch.Tensor
    k: int
    chunk_size: int | None

    def user(self, ctx: Context):
        kwargs = {} if self.chunk_size is None else {"chunk_size": self.chunk_size}
        ret = ctx.call(ctx.entry, self.queries.clone(), self.docs.clone(), self.k, **kwargs)
        if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(t, torch.Tensor) for t in ret)):
            return None
        if ret[0].shape != (self.queries.shape[0], self.k) or ret[1].shape != ret[0].shape:
            return None
        return torch.cat([ret[0].double().flatten(), ret[1].double().flatten()])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct retrieval" here.
        variant = variant if isinstance(variant, TopkVariant) else CORRECT_TOPK
        scores, ids = reference(self.queries, self.docs, self.k, self.chunk_size, variant)
        return torch.cat([scores.flatten(), ids.double().flatten()])


HYPOTHESES = (
    ("topk-no-normalisation", TopkVariant(normalise="none")),
    ("topk-no-normalisation", TopkVariant(normalise="docs")),
    ("topk-no-normalisation", TopkVariant(normalise="queries")),
    ("topk-normalised-wrong-dim", TopkVariant(normalise="dim0")),
    ("topk-chunks-not-resorted", TopkVariant(merge="concat")),
    ("topk-ascending", TopkVariant(order="ascending")),
    ("topk-ascending", TopkVariant(order="bottom")),
)


class TopkRetrievalTask:
    name = "topk_retrieval"

    def checks(self, ctx: Context) -> list[CheckDef]:
        drawn = ctx.sizes(300, (3, 9), (40, 130), (10, 30))
        queries, docs = make_inputs(ctx, 700, 5, 31, 7, torch.float32)
        defs = [
            CheckDef("shape.base", "shape", partial(numerical_check, ctx, 0, (4, 19, 6), 3)),
            CheckDef("shape.k-equals-n", "shape", partial(numerical_check, ctx, 1, (3, 7, 5), 7)),
            CheckDef("shape.one-query", "shape", partial(numerical_check, ctx, 2, (1, 12, 9), 4, 5)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, 3, drawn, 6)),
            CheckDef("numerical.chunked", "numerical", partial(numerical_check, ctx, 4, (7, 53, 11), 5, 9)),
            CheckDef("numerical.chunk-smaller-than-k", "numerical", partial(numerical_check, ctx, 5, (5, 41, 6), 8, 3)),
            CheckDef("numerical.chunk-larger-than-n", "numerical", partial(numerical_check, ctx, 6, (6, 17, 5), 4, 100)),
            CheckDef("numerical.drawn-chunked", "numerical", partial(numerical_check, ctx, 7, drawn, 6, drawn[0] + 4)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 8, (5, 29, 7), 6, 10, torch.float64)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(dtype_id("numerical", dt), "numerical", partial(numerical_check, ctx, 9, (5, 29, 7), 6, 10, dt, True))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("gradient.queries-docs", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.other-queries", "mask-leak", partial(query_independence_check, ctx)),
            CheckDef("stability.ties", "stability", partial(numerical_check, ctx, 10, (6, 40, 9), 12, None, lattice_inputs=True)),
            CheckDef("stability.ties-chunked", "stability", partial(numerical_check, ctx, 11, (6, 40, 9), 12, 7, lattice_inputs=True)),
            CheckDef("rules.chunked-memory", "rules", partial(memory_check, ctx)),
            CheckDef("robustness.repeatable", "robustness", partial(gradient_free_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, queries, docs, 4, 6), {"queries": queries, "docs": docs})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        a = make_inputs(ctx, 1100, 5, 37, 7)
        b = make_inputs(ctx, 1101, 4, 26, 5)
        return [Probe(*a, 6, None), Probe(*a, 4, 10), Probe(*b, 5, 7)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = TopkRetrievalTask()
