"""What ``drill grade --trace`` compares the user's layer_norm against: mean, centred, biased variance, rstd,
normalised, then the affine."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, T, D, EPS = 2, 5, 7, 1e-5  # normalised over D = 7; no two sizes equal


def case(ctx, offset: float = 3.0, std: float = 2.0, eps: float = EPS, label: Ev | None = None) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = offset + std * torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    weight, bias = (torch.randn(D, generator=gen, dtype=torch.float64) for _ in range(2))
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdim=True)
    rstd = (var + eps).rsqrt()
    normed = centred * rstd
    steps = [("x", x), ("weight", weight), ("bias", bias), (Ev("mean"), mean), (Ev("centred"), centred),
             (Ev("squared deviations"), centred * centred), (Ev("variance (biased)"), var), (Ev("variance + eps"), var + eps),
             ("std", (var + eps).sqrt()), ("1/std", rstd), (Ev("normalised"), normed), (Ev("normalised · weight"), normed * weight),
             ("output", normed * weight + bias)]  # fmt: skip
    return Case(ctx.entry, (x, weight, bias), steps, kwargs={"eps": eps}, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Inputs the small one hides bugs on, for the checks that failed: a small variance with a large eps (where
    eps must sit), rows around 1e8 (E[x²] - E[x]² cancels to noise even in float64)."""
    found = []
    if failed & {"numerical.eps-default", "numerical.eps-0.01"}:
        found.append(case(ctx, std=0.05, eps=1e-2, label=Ev("rows of std ~0.05 with eps = 0.01")))
    if "stability.large-offset" in failed:
        found.append(case(ctx, offset=1e8, std=1.0, label=Ev("rows around 1e8 with std ~1")))
    return found
