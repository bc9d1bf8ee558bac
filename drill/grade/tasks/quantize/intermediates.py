"""What ``drill grade --trace`` compares the user's quantize_int8 against (exactly where the step is an integer):
|w|, each row's absmax, the scale absmax / 127, the all-zero row and the safe scale, w / scale, rounded,
clamped to [-127, 127], q as int8. Row 2 is all zeros."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

OUT, IN = 5, 7  # no two sizes equal


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    w = torch.randn(OUT, IN, generator=gen, dtype=torch.float64) * torch.tensor([[1.0], [3.0], [0.0], [0.5], [2.0]])
    absmax = w.abs().amax(1, keepdim=True)
    scale = absmax / 127
    zero = scale == 0
    safe = torch.where(zero, torch.ones_like(scale), scale)
    rounded = torch.round(w / safe)
    clamped = rounded.clamp(-127, 127)
    steps = [("w", w), ("|w|", w.abs()), ("row absmax", absmax), ("scale = absmax / 127", scale),
             ("safe scale (1 on an all-zero row)", safe), ("w / scale", w / safe),
             ("round(w / scale)", rounded), ("clamped to [-127, 127]", clamped), ("q", clamped.to(torch.int8))]  # fmt: skip
    zh = {"row absmax": "每行的 absmax", "safe scale (1 on an all-zero row)": "安全的 scale（全零行取 1）",
          "clamped to [-127, 127]": "裁剪到 [-127, 127]"}  # fmt: skip
    return Case(ctx.entry, (w,), steps, output="q", integers=True, returned=("q", "scale = absmax / 127"), zh=zh)
