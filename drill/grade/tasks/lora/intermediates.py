"""What ``drill grade --trace`` compares the user's LoRALinear.forward against (α = 8, r = 2: scale 4, so α alone
shows): the base path x Wᵀ (+ b), A(x), B(A(x)), scaled by α/r, the sum; or the merged route B·A, (α/r)·B·A,
W + (α/r)·B·A. B holds the judge's random values, so the low-rank path shows."""

from __future__ import annotations

import torch

from drill.grade.tasks.lora.task import ALPHA, R, build
from drill.grade.trace_match import Case
from drill.grade.tracing import NoTrace

SHAPE = (3, 4, 6)  # tokens [3, 4] of 6 features -> 5, rank 2: no two sizes equal


def case(ctx) -> Case:
    built = build(ctx, torch.float64)
    if built.names is None:
        raise NoTrace("no A and B (or lora_A and lora_B) around the base layer")
    w, b, a, bb = built.params(torch.float64)
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(*SHAPE, generator=gen, dtype=torch.float64)
    s = ALPHA / R
    low = x @ a.T @ bb.T
    base = x @ w.T + b
    steps = [("x", x), ("x Wᵀ", x @ w.T), ("base(x)", base), ("A(x)", x @ a.T), ("B(A(x))", low), ("(α/r)·B(A(x))", s * low),
             ("B·A", bb @ a), ("(α/r)·B·A", s * (bb @ a)), ("W + (α/r)·B·A", w + s * (bb @ a)), ("output", base + s * low)]  # fmt: skip
    return Case(built.module, (x,), steps)
