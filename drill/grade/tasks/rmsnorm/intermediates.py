"""What ``drill grade --trace`` compares the user's rms_norm against: mean square, rsqrt, normalised, weight."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, T, D, EPS = 2, 5, 7, 1e-6  # no two sizes equal


def case(ctx, offset: float = 1.0, std: float = 2.0, eps: float = EPS, label: Ev | None = None) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = offset + std * torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    weight = torch.randn(D, generator=gen, dtype=torch.float64)
    square = x * x
    mean_square = square.mean(-1, keepdim=True)
    inv = (mean_square + eps).rsqrt()
    normed = x * inv
    steps = [("x", x), ("weight", weight), ("x²", square), (Ev("mean of x²"), mean_square),
             (Ev("mean of x² + eps"), mean_square + eps), ("rms", (mean_square + eps).sqrt()), ("1/rms", inv),
             (Ev("normalised"), normed), ("output", normed * weight)]  # fmt: skip
    return Case(ctx.entry, (x, weight), steps, kwargs={"eps": eps}, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Rows of a small rms with a large eps when an eps check failed: where eps sits shows there."""
    if failed & {"numerical.eps-default", "numerical.eps-1e-4"}:
        return [case(ctx, offset=0.0, std=0.01, eps=1e-4, label=Ev("rows of rms ~0.01 with eps = 1e-4"))]
    return []
