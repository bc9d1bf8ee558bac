"""What ``drill grade --trace`` compares the user's sinusoidal_positions against: positions, 2i and
its exponent (each usual route: base^(-2i/d), exp(-2i·ln(base)/d), 1/base^(2i/d)), the angle
table, its sin and cos, then the interleaved table."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

T, D, BASE = 5, 14, 10000.0  # 5 positions, 7 frequency pairs: no two sizes equal


def case(ctx) -> Case:
    pos = torch.arange(T, dtype=torch.float64)
    two_i = torch.arange(0, D, 2, dtype=torch.float64)  # no pair index i: 0..d/2-1 would hold 0..T-1 as a block
    freqs = BASE ** (-two_i / D)
    angles = pos[:, None] * freqs
    steps = [("positions", pos), ("2i", two_i), ("-2i", -two_i), ("2i/d", two_i / D),
             ("-2i/d", -two_i / D), ("-2i·ln(base)/d", -two_i * math.log(BASE) / D), ("base^(2i/d)", BASE ** (two_i / D)),
             (Ev("frequencies base^(-2i/d)"), freqs), (Ev("angles t·freq"), angles), (Ev("sin(angles)"), angles.sin()),
             (Ev("cos(angles)"), angles.cos()), ("output", torch.stack((angles.sin(), angles.cos()), -1).flatten(-2))]  # fmt: skip
    return Case(ctx.entry, (T, D), steps, table=True)
