"""Checks for row-wise ops (norms, feed-forward layers): each row of ``[..., D]`` is computed on its own.

A norm over the wrong axis, or an FFN that mixes tokens, makes one row's output depend on another
row; in float64 an untouched row must not move at all.
"""

from __future__ import annotations

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD, OUTPUT, expect_shape
from drill.grade.context import Context, WrongShape, outcome
from drill.text.messages import Ev


def tensor_result(value, what: str = OUTPUT) -> torch.Tensor:
    """The user's return value as a tensor, or WrongShape naming what came back."""
    if not isinstance(value, torch.Tensor):
        raise WrongShape(Ev("{what}: returned {type}, not a tensor", what=what, type=type(value).__name__))
    return value


def row_independence_check(ctx: Context, call, x: torch.Tensor, *codes: str):
    """Perturb one row of float64 ``x [B, T, D]`` at a time: only that row's output may change.

    ``call(x)`` returns the output; ``codes`` are what a dependence on other rows proves."""
    base = tensor_result(call(x.clone()))
    expect_shape(base, x.shape)
    b, t = x.shape[:2]
    gen = ctx.generator(450)
    for s in range(b):
        for i in range(t):
            x2 = x.clone()
            x2[s, i] += 3 * ctx.randn(x.shape[-1], gen=gen, dtype=x.dtype)
            out = tensor_result(call(x2))
            expect_shape(out, x.shape)
            change = (out.detach() - base.detach()).abs().nan_to_num(nan=float("inf")).amax(dim=-1)  # [B, T]
            change[s, i] = 0.0
            if (change > LEAK_THRESHOLD).any():
                s2, i2 = (int(n) for n in (change > LEAK_THRESHOLD).nonzero()[0])
                return outcome(
                    "fail",
                    Ev("changing row [{s}, {i}] moved row [{s2}, {i2}] by {d:.3g} (float64): "
                       "each row must be computed from itself alone", s=s, i=i, s2=s2, i2=i2, d=change[s2, i2].item()),
                    *codes,
                )
    return outcome("pass", Ev("each of the {n} rows depends on itself alone (float64)", n=b * t))
