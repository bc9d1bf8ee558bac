"""What ``drill grade --trace`` compares the user's softmax against: the row max, the shifted scores, exp, the sum."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

SHAPE = (2, 3, 5, 7)  # softmax over the last dim (7); no two sizes equal


def case(ctx, offsets=None, dim: int = -1, label: Ev | None = None) -> Case:
    """``offsets``: added to the 5 rows of each [5, 7] slice (the stress inputs); ``dim``: the softmax dim."""
    x = 4 * torch.randn(*SHAPE, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    if offsets is not None:
        x = x + torch.tensor(offsets, dtype=torch.float64)[:, None]
    row_max = x.amax(dim, keepdim=True)
    shifted = x - row_max
    e = shifted.exp()
    total = e.sum(dim, keepdim=True)
    steps = [("x", x), (Ev("row max"), row_max), ("x - max", shifted), ("exp(x - max)", e), (Ev("sum of exp"), total),
             ("output", e / total)]  # fmt: skip
    return Case(ctx.entry, (x,), steps, kwargs={"dim": dim}, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Inputs the small one hides bugs on, for the checks that failed: logits at ±1e3 (exp without the max
    overflows), rows far apart (a max over the whole tensor underflows the lowest row), another dim."""
    found = []
    if failed & {"stability.large-logits", "stability.large-logits.float16"}:
        found.append(case(ctx, [1e3, -1e3, 1e3, -1e3, 1e3], label=Ev("logits around ±1e3")))
    if "stability.row-offsets" in failed:
        found.append(case(ctx, [600.0, 0.0, -600.0, 300.0, -300.0], label=Ev("rows offset by +600, 0 and -600")))
    if any(f.rsplit(".", 1)[-1] in {"dim0", "dim1", "dim-2"} for f in failed):
        found.append(case(ctx, dim=1, label=Ev("a softmax over dim 1")))
    return found
