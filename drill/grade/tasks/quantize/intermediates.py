"""What ``drill grade --trace`` compares the user's quantize_int8 against (exactly where the step is an integer):
|w|, each row's absmax, the scale absmax / 127, the all-zero row and the safe scale, w / scale, rounded,
clamped to [-127, 127], q as int8. Row 2 is all zeros."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

OUT, IN = 5, 7  # no two sizes equal


def case(ctx, w: torch.Tensor | None = None, label: Ev | None = None) -> Case:
    """The steps in w's dtype: float64 for the fixed input, bfloat16 for the stress one (the contract's algorithm in it)."""
    if w is None:
        gen = torch.Generator().manual_seed(7)
        w = torch.randn(OUT, IN, generator=gen, dtype=torch.float64) * torch.tensor([[1.0], [3.0], [0.0], [0.5], [2.0]])
    absmax = w.abs().amax(1, keepdim=True)
    scale = absmax / 127
    zero = scale == 0
    safe = torch.where(zero, torch.ones_like(scale), scale)
    rounded = torch.round(w / safe)
    clamped = rounded.clamp(-127, 127)
    steps = [("w", w), ("|w|", w.abs()), (Ev("row absmax"), absmax), ("scale = absmax / 127", scale),
             (Ev("safe scale (1 on an all-zero row)"), safe), ("w / scale", w / safe),
             ("round(w / scale)", rounded), (Ev("clamped to [-127, 127]"), clamped), ("q", clamped.to(torch.int8))]  # fmt: skip
    return Case(ctx.entry, (w,), steps, output="q", integers=True, returned=("q", "scale = absmax / 127"), label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """bfloat16 rows whose absmax / scale rounds to 128 when a bfloat16 check failed: only there does a missing clamp
    show (the int8 cast wraps 128 to -128); in float64 the quotient never passes 127."""
    if not failed & {"numerical.bfloat16-levels", "numerical.bfloat16-error-bound"}:
        return []
    return [case(ctx, wrapping(), label=Ev("bfloat16 rows whose absmax / scale rounds to 128"))]


def wrapping() -> torch.Tensor:
    """OUT bfloat16 rows where the quotient rounds to 128 in bfloat16, and where the quotient taken in float32 instead
    gives the same q and, cast back, the same scale: a correct file in either precision matches every step it names."""
    from drill.grade.tasks.quantize.task import QuantVariant, reference

    pool = torch.randn(2000, IN, generator=torch.Generator().manual_seed(8), dtype=torch.float64).to(torch.bfloat16)
    q, scale = reference(pool)
    wraps = reference(pool, QuantVariant(overflow="wrap"))[0].amin(dim=1) == -128
    q32, scale32 = reference(pool.float())
    same = (q32 == q.float()).all(dim=1) & (scale32.to(torch.bfloat16) == scale).all(dim=1)
    return pool[wraps & same][:OUT]
