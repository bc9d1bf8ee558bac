"""What ``drill grade --trace`` compares the user's apply_rope against: the angle table, cos/sin and each
rotated half, for both accepted layouts (the one whose output the user's matches is used)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, H, T, D = 2, 3, 5, 8  # T != D/2 = 4, so the angle table [T, D/2] cannot be read transposed
BASE = 10000.0
PARTS = {  # per layout: the pair's two parts, then the products a·cos, b·sin, a·sin, b·cos
    "half": (Ev("x first half"), Ev("x second half"), Ev("x first half · cos"), Ev("x second half · sin"),
             Ev("x first half · sin"), Ev("x second half · cos")),
    "interleaved": (Ev("x even dims"), Ev("x odd dims"), Ev("x even dims · cos"), Ev("x odd dims · sin"),
                    Ev("x even dims · sin"), Ev("x odd dims · cos")),
}  # fmt: skip


def case(ctx) -> list[Case]:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, H, T, D, generator=gen, dtype=torch.float64)
    positions = torch.tensor([3, 0, 7, 1, 4])  # not arange: a file that ignores positions shows at once
    exponent = torch.arange(D // 2, dtype=torch.float64) * 2 / D
    freqs = BASE**-exponent
    angles = positions.double()[:, None] * freqs[None, :]  # [T, D/2]
    cos, sin = angles.cos(), angles.sin()
    shared = [("x", x), ("positions", positions.double()), ("2i/D", exponent), (Ev("frequencies"), freqs), (Ev("angles"), angles),
              ("cos", cos), ("sin", sin)]  # fmt: skip
    first, second = x[..., : D // 2], x[..., D // 2 :]
    half = rotated("half", first, second, cos, sin, lambda a, b: torch.cat((a, b), dim=-1))
    even, odd = x[..., 0::2], x[..., 1::2]
    pairs = rotated("interleaved", even, odd, cos, sin, lambda a, b: torch.stack((a, b), dim=-1).flatten(-2))
    return [Case(ctx.entry, (x, positions), shared + steps, all_data=True) for steps in (half, pairs)]


def rotated(layout: str, a, b, cos, sin, join) -> list[tuple[str, torch.Tensor]]:
    """The steps of one layout: the pair's two parts, the four products, the two rotated parts, the output; and the
    per-dim form (x * cos + partner * sin) as rotate_half-style code writes it."""
    names = PARTS[layout]
    per_dim = (lambda t: torch.cat((t, t), dim=-1)) if layout == "half" else (lambda t: t.repeat_interleave(2, dim=-1))
    x = join(a, b)
    partner = join(-b, a)
    return [(names[0], a), (names[1], b), (names[2], a * cos), (names[3], b * sin), (names[4], a * sin), (names[5], b * cos),
            (Ev("cos per dim"), per_dim(cos)), (Ev("sin per dim"), per_dim(sin)), (Ev("partner (rotated x)"), partner),
            ("x · cos", x * per_dim(cos)), (Ev("partner · sin"), partner * per_dim(sin)),
            (Ev("rotated first part"), a * cos - b * sin), (Ev("rotated second part"), a * sin + b * cos),
            ("output", join(a * cos - b * sin, a * sin + b * cos))]  # fmt: skip
