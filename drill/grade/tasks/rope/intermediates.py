"""What ``drill grade --trace`` compares the user's apply_rope against: the angle table, cos/sin and each
rotated half, for both accepted layouts (the one whose output the user's matches is used)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

B, H, T, D = 2, 3, 5, 8  # T != D/2 = 4, so the angle table [T, D/2] cannot be read transposed
BASE = 10000.0


def case(ctx) -> list[Case]:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(B, H, T, D, generator=gen, dtype=torch.float64)
    positions = torch.tensor([3, 0, 7, 1, 4])  # not arange: a file that ignores positions shows at once
    exponent = torch.arange(D // 2, dtype=torch.float64) * 2 / D
    freqs = BASE**-exponent
    angles = positions.double()[:, None] * freqs[None, :]  # [T, D/2]
    cos, sin = angles.cos(), angles.sin()
    shared = [("x", x), ("positions", positions.double()), ("2i/D", exponent), ("frequencies", freqs), ("angles", angles),
              ("cos", cos), ("sin", sin)]  # fmt: skip
    first, second = x[..., : D // 2], x[..., D // 2 :]
    half = rotated("half", first, second, cos, sin, lambda a, b: torch.cat((a, b), dim=-1))
    even, odd = x[..., 0::2], x[..., 1::2]
    pairs = rotated("interleaved", even, odd, cos, sin, lambda a, b: torch.stack((a, b), dim=-1).flatten(-2))
    return [
        Case(ctx.entry, (x, positions), shared + steps, all_data=True, zh={"frequencies": "频率", "angles": "角度"} | zh)
        for steps, zh in (half, pairs)
    ]


def rotated(layout: str, a, b, cos, sin, join) -> tuple[list[tuple[str, torch.Tensor]], dict[str, str]]:
    """The steps of one layout and their Chinese names: the pair's two parts, the four products, the two rotated
    parts, the output; and the per-dim form (x * cos + partner * sin) as rotate_half-style code writes it."""
    names = ("x first half", "x second half") if layout == "half" else ("x even dims", "x odd dims")
    zh_names = ("x 前一半", "x 后一半") if layout == "half" else ("x 偶数维", "x 奇数维")
    per_dim = (lambda t: torch.cat((t, t), dim=-1)) if layout == "half" else (lambda t: t.repeat_interleave(2, dim=-1))
    x = join(a, b)
    partner = join(-b, a)
    steps = [(names[0], a), (names[1], b), (f"{names[0]} · cos", a * cos), (f"{names[1]} · sin", b * sin),
             (f"{names[0]} · sin", a * sin), (f"{names[1]} · cos", b * cos), ("cos per dim", per_dim(cos)),
             ("sin per dim", per_dim(sin)), ("partner (rotated x)", partner), ("x · cos", x * per_dim(cos)),
             ("partner · sin", partner * per_dim(sin)), ("rotated first part", a * cos - b * sin),
             ("rotated second part", a * sin + b * cos), ("output", join(a * cos - b * sin, a * sin + b * cos))]  # fmt: skip
    zh = dict(zip(names, zh_names)) | {f"{names[i]} · {f}": f"{zh_names[i]} · {f}" for i in (0, 1) for f in ("cos", "sin")}
    zh |= {"cos per dim": "逐维的 cos", "sin per dim": "逐维的 sin", "partner (rotated x)": "配对分量（旋转后的 x）",
           "partner · sin": "配对分量 · sin", "rotated first part": "旋转后的第一部分", "rotated second part": "旋转后的第二部分"}  # fmt: skip
    return steps, zh
