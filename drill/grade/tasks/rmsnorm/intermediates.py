"""What ``drill grade --trace`` compares the user's rms_norm against: mean square, rsqrt, normalised, weight."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

B, T, D, EPS = 2, 5, 7, 1e-6  # no two sizes equal


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = 1 + 2 * torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    weight = torch.randn(D, generator=gen, dtype=torch.float64)
    square = x * x
    mean_square = square.mean(-1, keepdim=True)
    inv = (mean_square + EPS).rsqrt()
    normed = x * inv
    steps = [("x", x), ("weight", weight), ("x²", square), ("mean of x²", mean_square), ("mean of x² + eps", mean_square + EPS),
             ("rms", (mean_square + EPS).sqrt()), ("1/rms", inv), ("normalised", normed), ("output", normed * weight)]  # fmt: skip
    zh = {"mean of x²": "x² 的均值", "mean of x² + eps": "x² 的均值 + eps", "normalised": "归一化后"}
    return Case(ctx.entry, (x, weight), steps, kwargs={"eps": EPS}, zh=zh)
