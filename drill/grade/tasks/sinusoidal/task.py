"""The ``sinusoidal`` task: ``sinusoidal_positions(T, d_model, base=10000.0)``, the encoding of Vaswani et al.

PE[t, 2i] = sin(t * base^(-2i/d)) and PE[t, 2i+1] = cos(t * base^(-2i/d)). In float32 the angle
t * freq carries a relative error of a few ulps, so its absolute error grows with t: at t = 4096
the sin and cos are only good to ~1e-4. The tolerance is therefore set per position, against
the worst of the usual float32 routes (t / base^(2i/d), t * exp(-2i ln(base) / d), t * (1 / base^(2i/d)))
at that same position: late rows may be as rough as float32 makes them, early rows may not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.tolerance import BACKSTOP
from drill.text.messages import Ev


@dataclass(frozen=True)
class SinusoidalVariant:
    exponent: str = "2i/d"  # 2i/d (correct) | i/d (pair index over d) | j/d (each dim its own) | +2i/d (no reciprocal)
    swapped: bool = False  # cos at even dims, sin at odd
    layout: str = "interleaved"  # interleaved (correct) | halves: cat(sin, cos)
    start: int = 0  # first position (1: positions 1..T)


CORRECT = SinusoidalVariant()
ROUTES = ("div", "exp", "mul")  # the float32 formulas the per-position tolerance allows for


def encoding(t: int, d: int, base: float, variant=CORRECT, dtype=torch.float64, route: str = "div"):
    """The encoding in ``dtype`` (angles included), by ``route``, with the mistake ``variant`` models."""
    variant = variant if isinstance(variant, SinusoidalVariant) else CORRECT  # the engine's baseline: the correct one
    pos = (torch.arange(t) + variant.start).to(dtype)[:, None]
    two_i = torch.arange(0, d, 2).to(dtype)
    exponents = {"2i/d": (two_i, two_i), "i/d": (two_i / 2, two_i / 2), "j/d": (two_i, two_i + 1), "+2i/d": (-two_i, -two_i)}
    angles = []
    for e in exponents[variant.exponent]:
        if route == "exp":
            angles.append(pos * torch.exp(e * (-math.log(base) / d)))
        elif route == "mul":
            angles.append(pos * (1.0 / base ** (e / d)))
        else:
            angles.append(pos / base ** (e / d))
    even, odd = angles[0].sin(), angles[1].cos()
    if variant.swapped:
        even, odd = angles[0].cos(), angles[1].sin()
    if variant.layout == "halves":
        return torch.cat((even, odd), dim=-1)
    return torch.stack((even, odd), dim=-1).flatten(-2)


def run(ctx: Context, t: int, d: int, base: float | None = None):
    out = ctx.call(ctx.entry, t, d) if base is None else ctx.call(ctx.entry, t, d, base=base)
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("returned {type}, not a tensor", type=type(out).__name__))
    if tuple(out.shape) != (t, d):
        raise WrongShape(Ev("sinusoidal_positions({t}, {d}) has shape {shape}, expected [{t}, {d}]", t=t, d=d, shape=list(out.shape)))
    return out.detach().cpu()


def per_position(label: Ev, out, t: int, d: int, base: float):
    """Each row t against the float64 truth, allowed 2x the worst float32 route's error in that row plus a floor."""
    truth = encoding(t, d, base)
    worst = torch.stack([(encoding(t, d, base, dtype=torch.float32, route=r).double() - truth).abs() for r in ROUTES])
    baseline = worst.amax(dim=(0, 2))  # [T]
    rounded = truth.float()
    floor = (rounded + 0.3 - 0.3 - rounded).abs().double().amax(dim=-1)
    allowed = torch.clamp(2 * baseline + floor, min=BACKSTOP[torch.float32])  # |PE| <= 1
    error = (out.double() - truth).abs().nan_to_num(nan=float("inf"))
    ratio = error.amax(dim=-1) / allowed
    row = int(ratio.argmax())
    if ratio[row] > 1:
        col = int(error[row].argmax())
        return outcome(
            "fail",
            Ev("{label}: position {row}, dim {col}: got {got:.6g}, expected {expected:.6g} (error {error:.3g}, allowed {allowed:.3g} "
               "at this position)", label=label, row=row, col=col, got=out[row, col].item(), expected=truth[row, col].item(),
               error=error[row, col].item(), allowed=allowed[row].item()),  # fmt: skip
        )
    return outcome("pass", Ev("{label}: every position within its float32 tolerance (allowed {first:.2g} at t=0, {last:.2g} at t={t})",
                              label=label, first=allowed[0].item(), last=allowed[-1].item(), t=t - 1))  # fmt: skip


def shape_check(ctx: Context, t: int, d: int):
    out = run(ctx, t, d)
    if out.dtype != torch.float32:
        return outcome("fail", Ev("output dtype is {dtype}, expected torch.float32", dtype=str(out.dtype)))
    return outcome("pass", Ev("output [{t}, {d}], float32", t=t, d=d))


def numerical_check(ctx: Context, t: int, d: int, base: float | None):
    label = Ev("T={t}, d_model={d}", t=t, d=d) if base is None else Ev("T={t}, d_model={d}, base={base:g}", t=t, d=d, base=base)
    return per_position(label, run(ctx, t, d, base), t, d, 10000.0 if base is None else base)


def drawn_check(ctx: Context):
    """T, d_model (even) and base drawn from the seed: a file right only at the fixed shapes fails here."""
    t, half, hundreds = ctx.sizes(330, (2, 300), (1, 48), (1, 200))
    d, base = 2 * half, 100.0 * hundreds
    label = Ev("T={t}, d_model={d}, base={base:g} (drawn from the seed)", t=t, d=d, base=base)
    return per_position(label, run(ctx, t, d, base), t, d, base)


def position_zero_check(ctx: Context):
    row = run(ctx, 3, 8)[0]
    expected = torch.tensor([0.0, 1.0] * 4)
    if not torch.equal(row.float(), expected):
        return outcome("fail", Ev("position 0 is {row}, expected sin(0), cos(0) = [0, 1, 0, 1, ...]", row=[round(v, 4) for v in row.tolist()]))
    return outcome("pass", Ev("position 0 is exactly [0, 1, 0, 1, ...]"))


def unit_pairs_check(ctx: Context):
    """(PE[t, 2i], PE[t, 2i+1]) = (sin a, cos a) of one angle: a point on the unit circle."""
    out = run(ctx, 50, 16).double()
    radius = (out[:, 0::2] ** 2 + out[:, 1::2] ** 2 - 1).abs()
    if radius.max() > 1e-5:
        t, i = (int(v) for v in (radius == radius.max()).nonzero()[0])
        return outcome("fail", Ev("position {t}: dims {a} and {b} give sin^2 + cos^2 = {value:.4g}, not 1: they are not sin and cos of one angle",
                                  t=t, a=2 * i, b=2 * i + 1, value=radius[t, i].item() + 1))  # fmt: skip
    return outcome("pass", Ev("every pair (2i, 2i+1) is (sin, cos) of one angle (sin^2 + cos^2 = 1)"))


def prefix_check(ctx: Context):
    short, long = run(ctx, 7, 12), run(ctx, 40, 12)
    if not torch.allclose(short, long[:7], rtol=0, atol=1e-6):
        return outcome("fail", Ev("the first 7 rows of T=40 differ from T=7 by {diff:.3g}: a position's encoding must not depend on T",
                                  diff=(short - long[:7]).abs().max().item()))  # fmt: skip
    return outcome("pass", Ev("sinusoidal_positions(40, 12)[:7] equals sinusoidal_positions(7, 12)"))


@dataclass(frozen=True)
class Probe:
    """Positions 0..4 only: float32 angles there stay exact to ~1e-7, so the float64 match is fair."""

    t: int
    d: int
    base: float

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.t, self.d, base=self.base)
        return out.detach().cpu().double() if isinstance(out, torch.Tensor) else None

    def expected(self, variant):
        return encoding(self.t, self.d, self.base, variant)


class SinusoidalTask:
    name = "sinusoidal"

    def checks(self, ctx: Context) -> list[CheckDef]:
        return [
            CheckDef("shape.basic", "shape", partial(shape_check, ctx, 7, 10)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, 1, 6)),
            CheckDef("shape.d2", "shape", partial(shape_check, ctx, 5, 2)),
            CheckDef("numerical.small", "numerical", partial(numerical_check, ctx, 12, 16, None)),
            CheckDef("numerical.odd-pairs", "numerical", partial(numerical_check, ctx, 9, 6, None)),
            CheckDef("numerical.base-500", "numerical", partial(numerical_check, ctx, 20, 8, 500.0)),
            CheckDef("numerical.long", "numerical", partial(numerical_check, ctx, 4096, 64, None)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.position-zero", "numerical", partial(position_zero_check, ctx)),
            CheckDef("stability.unit-pairs", "stability", partial(unit_pairs_check, ctx)),
            CheckDef("robustness.prefix", "robustness", partial(prefix_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(5, 12, 10000.0), Probe(5, 6, 100.0)]

    def hypotheses(self, ctx: Context):
        return (
            ("sinusoidal-frequency-exponent", SinusoidalVariant(exponent="i/d")),
            ("sinusoidal-frequency-exponent", SinusoidalVariant(exponent="j/d")),
            ("sinusoidal-frequency-exponent", SinusoidalVariant(exponent="+2i/d")),
            ("sinusoidal-sin-cos-swapped", SinusoidalVariant(swapped=True)),
            ("sinusoidal-halves-concatenated", SinusoidalVariant(layout="halves")),
            ("sinusoidal-position-offset", SinusoidalVariant(start=1)),
        )


TASK = SinusoidalTask()
