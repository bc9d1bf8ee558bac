"""What ``drill grade --trace`` compares the user's topk_cosine against: Q = 3 queries, N = 11 documents, D = 5
features, k = 4, rows of different norms; no chunk_size. The steps: the norms, the normalised rows, the [Q, N]
cosine matrix, its rows sorted and the k best. When a chunked check failed (the plain call traced clean), the same
input is traced with chunk_size = 4: each chunk's block of the cosine matrix is a step of its own.
"""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

Q, N, D, K, CHUNK = 3, 11, 5, 4, 4
CHUNKED = frozenset({"numerical.chunked", "numerical.chunk-smaller-than-k", "numerical.chunk-larger-than-n", "numerical.drawn-chunked",
                     "stability.ties-chunked", "gradient.queries-docs"})  # fmt: skip


def case(ctx, chunk: int | None = None) -> Case:
    gen = torch.Generator().manual_seed(7)
    queries = torch.randn(Q, D, generator=gen, dtype=torch.float64) * (0.3 + 2 * torch.rand(Q, 1, generator=gen, dtype=torch.float64))
    docs = torch.randn(N, D, generator=gen, dtype=torch.float64) * (0.3 + 2 * torch.rand(N, 1, generator=gen, dtype=torch.float64))
    qn, dn = queries.norm(dim=-1, keepdim=True), docs.norm(dim=-1, keepdim=True)
    q, d = queries / qn, docs / dn
    scores = q @ d.T
    ranked = torch.sort(scores, dim=1, descending=True, stable=True).values
    steps = [(Ev("queries"), queries), (Ev("docs"), docs), (Ev("query norms"), qn), (Ev("doc norms"), dn),
             (Ev("normalised queries"), q), (Ev("normalised docs"), d), (Ev("scores = cosine"), scores)]  # fmt: skip
    if chunk:
        for i, start in enumerate(range(0, N, chunk)):
            steps.append((Ev("chunk {i} scores", i=i), scores[:, start : start + chunk]))
    steps += [(Ev("scores sorted"), ranked), ("output", ranked[:, :K])]
    kwargs = {"chunk_size": chunk} if chunk else {}
    label = Ev("chunk_size={chunk}", chunk=chunk) if chunk else None
    return Case(ctx.entry, (queries, docs, K), steps, kwargs=kwargs, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """The chunked call, when a chunked check failed."""
    return [case(ctx, CHUNK)] if failed & CHUNKED else []
