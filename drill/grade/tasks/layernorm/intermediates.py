"""What ``drill grade --trace`` compares the user's layer_norm against: mean, centred, biased variance, rstd,
normalised, then the affine."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

B, T, D, EPS = 2, 5, 7, 1e-5  # normalised over D = 7; no two sizes equal


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = 3 + 2 * torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    weight, bias = (torch.randn(D, generator=gen, dtype=torch.float64) for _ in range(2))
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdim=True)
    rstd = (var + EPS).rsqrt()
    normed = centred * rstd
    steps = [("x", x), ("weight", weight), ("bias", bias), ("mean", mean), ("centred", centred),
             ("squared deviations", centred * centred), ("variance (biased)", var), ("variance + eps", var + EPS),
             ("std", (var + EPS).sqrt()), ("1/std", rstd), ("normalised", normed), ("normalised · weight", normed * weight),
             ("output", normed * weight + bias)]  # fmt: skip
    zh = {"mean": "均值", "centred": "中心化后", "squared deviations": "偏差的平方", "variance (biased)": "方差（有偏）",
          "variance + eps": "方差 + eps", "normalised": "归一化后", "normalised · weight": "归一化后 · weight"}  # fmt: skip
    return Case(ctx.entry, (x, weight, bias), steps, kwargs={"eps": EPS}, zh=zh)
