"""The ``rope`` task: ``apply_rope(x, positions, base=10000.0)``, rotary position embedding.

Two layouts are in common use and both are accepted, whichever matches the user's output:
``interleaved`` (the RoFormer paper, GPT-J, Meta's LLaMA code) rotates the pairs
(x[2i], x[2i+1]); ``half`` (GPT-NeoX, Hugging Face ``rotate_half``) rotates (x[i], x[i + D/2]).
Either way pair i turns by pos * base^(-2i/D). They are the same map up to a fixed
permutation of the feature dims, which the projection weights absorb, but a checkpoint
trained with one is wrong under the other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.compare import against_truth, expect_like, expect_shape
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.checks.common import no_mutation_check
from drill.grade.tolerance import property_allowed
from drill.text.messages import Ev

LAYOUTS = ("interleaved", "half")
X = (2, 3, 5, 8)


@dataclass(frozen=True)
class RopeVariant:
    pairing: str = "interleaved"  # which dims rotate together: interleaved | half
    freqs: str | None = None  # the layout of the per-dim angles; None = the pairing's own (correct)
    exponent: str = "-2i/D"  # -2i/D (correct) | -i/D | +2i/D | -4i/D (2i over D/2) | -2i/(D-2) (linspace(0, 1, D/2))
    sign: int = 1  # -1: rotated the other way (positions negated)
    swapped: bool = False  # x*sin + rotate(x)*cos
    ignores_positions: bool = False  # rotates row t by angle t (arange(T)), whatever positions says


def inverse_frequencies(d: int, variant: RopeVariant, base: float) -> torch.Tensor:
    i = torch.arange(d // 2, dtype=torch.float64)
    power = {"-2i/D": -2 * i / d, "-i/D": -i / d, "+2i/D": 2 * i / d, "-4i/D": -4 * i / d,
             "-2i/(D-2)": -2 * i / max(d - 2, 2)}[variant.exponent]  # fmt: skip
    return base**power


def rope(x, positions, base: float = 10000.0, variant: RopeVariant = RopeVariant()):
    """The reference, computed in x's dtype as an implementation would (angles included)."""
    d = x.shape[-1]
    if variant.ignores_positions:
        positions = torch.arange(x.shape[-2], device=x.device)
    angles = positions.to(x.dtype)[:, None] * inverse_frequencies(d, variant, base).to(x.device, x.dtype)  # [T, D/2]
    per_dim = angles.repeat_interleave(2, dim=-1) if (variant.freqs or variant.pairing) == "interleaved" else angles.repeat(1, 2)
    cos, sin = per_dim.cos(), variant.sign * per_dim.sin()
    if variant.pairing == "interleaved":
        even, odd = x[..., 0::2], x[..., 1::2]
        partner = torch.stack((-odd, even), dim=-1).flatten(-2)
    else:
        first, second = x[..., : d // 2], x[..., d // 2 :]
        partner = torch.cat((-second, first), dim=-1)
    if variant.swapped:
        cos, sin = sin, cos
    return x * cos + partner * sin


def run(ctx: Context, x, positions, **kwargs):
    out = ctx.call(ctx.entry, x, positions, **kwargs)
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("returned {type}, not a tensor", type=type(out).__name__))
    expect_shape(out, x.shape)
    return out


def detect_layout(ctx: Context) -> str:
    """The accepted layout closest to the user's output on one float64 probe."""
    x = ctx.randn(*X, gen=ctx.generator(1), dtype=torch.float64)
    positions = torch.arange(X[-2], device=ctx.device)
    out = run(ctx, x.clone(), positions).double()
    return min(LAYOUTS, key=lambda p: (out - rope(x, positions, variant=RopeVariant(p))).abs().max().item())


def shape_check(ctx: Context, shape, dtype):
    x = ctx.randn(*shape, gen=ctx.generator(2), dtype=dtype)
    out = run(ctx, x, torch.arange(shape[-2], device=ctx.device))
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}, {dtype}", shape=list(out.shape), dtype=str(dtype)[6:]))


def numerical_check(ctx: Context, shape, positions, base, offset):
    layout = RopeVariant(detect_layout(ctx))
    x = ctx.randn(*shape, gen=ctx.generator(100 + offset), dtype=torch.float64)
    positions = torch.tensor(positions, device=ctx.device)
    kwargs = {} if base is None else {"base": base}
    out = run(ctx, x.float(), positions, **kwargs)
    base = 10000.0 if base is None else base
    truth, same = rope(x, positions, base, layout), rope(x.float(), positions, base, layout)
    result = against_truth([(Ev("positions {positions}", positions=positions.tolist()), out, truth, same)])
    if result.status == "pass":
        result.message = Ev("{what} ({layout} layout)", what=result.message, layout=layout.pairing)
    return result


def drawn_check(ctx: Context):
    """[B, H, T, d] (d = 2 * a drawn half) and T positions up to 255, all drawn from the seed."""
    b, h, t, half = ctx.sizes(320, (1, 3), (1, 4), (2, 9), (2, 12))
    positions = torch.randint(0, 256, (t,), generator=ctx.generator(321)).tolist()
    result = numerical_check(ctx, (b, h, t, 2 * half), positions, None, 322)
    result.message = Ev("x={shape} (drawn from the seed): {what}", shape=[b, h, t, 2 * half], what=result.message)
    return result


def _norm_drift(x, out) -> float:
    return (out.double().norm(dim=-1) / x.double().norm(dim=-1) - 1).abs().max().item()


def norm_check(ctx: Context):
    """A rotation keeps every vector's norm: the user's float32 drift against the float32 reference's."""
    layout = RopeVariant(detect_layout(ctx))
    x = ctx.randn(*X, gen=ctx.generator(300))
    positions = torch.arange(10, 10 + X[-2], device=ctx.device)
    drift = _norm_drift(x, run(ctx, x.clone(), positions))
    allowed = property_allowed(_norm_drift(x, rope(x, positions, variant=layout)), x.dtype)
    if not drift <= allowed:
        return outcome("fail", Ev("the rotation changes a vector's norm by up to {d:.3g} (float32; allowed {a:.2g})", d=drift, a=allowed))
    return outcome("pass", Ev("norms preserved to {d:.2g} (float32; allowed {a:.2g})", d=drift, a=allowed))


def _shift_drift(apply, q, k, m, n) -> tuple[float, float]:
    scores = [(apply(q.clone(), m + s).double() * apply(k.clone(), n + s).double()).sum(-1) for s in (0, 7)]
    return (scores[0] - scores[1]).abs().max().item(), scores[0].abs().max().item()


def relative_check(ctx: Context):
    """<rope(q, m), rope(k, n)> must depend on m - n only: shift both positions by 7 (float32, against
    how far the float32 reference drifts on the same inputs)."""
    layout = RopeVariant(detect_layout(ctx))
    gen = ctx.generator(400)
    q, k = (ctx.randn(6, 8, gen=gen) for _ in range(2))
    m = torch.tensor([0, 3, 5, 9, 2, 1], device=ctx.device)
    n = torch.tensor([4, 3, 0, 1, 8, 6], device=ctx.device)
    drift, magnitude = _shift_drift(lambda z, p: run(ctx, z, p), q, k, m, n)
    reference, _ = _shift_drift(lambda z, p: rope(z, p, variant=layout), q, k, m, n)
    allowed = property_allowed(reference, q.dtype, max(1.0, magnitude))
    if not drift <= allowed:
        return outcome("fail", Ev("q.k changes by {d:.3g} when both positions shift by 7 (float32; allowed {a:.2g}): "
                                  "it must depend on m - n only", d=drift, a=allowed))  # fmt: skip
    return outcome("pass", Ev("q.k depends only on m - n (drift {d:.2g}, allowed {a:.2g}, float32)", d=drift, a=allowed))


def gradient_check(ctx: Context):
    layout = RopeVariant(detect_layout(ctx))
    gen = ctx.generator(200)
    x64 = ctx.randn(*X, gen=gen, dtype=torch.float64)
    seed_grad = ctx.randn(*X, gen=gen, dtype=torch.float64)
    positions = torch.arange(3, 3 + X[-2], device=ctx.device)
    x = x64.float().requires_grad_()
    out = run(ctx, x, positions)
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    if x.grad is None:
        return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name="x"))
    grads = []
    for precision in (torch.float64, torch.float32):
        leaf = x64.detach().clone().to(precision).requires_grad_()
        (rope(leaf, positions, variant=layout) * seed_grad.to(precision)).sum().backward()
        grads.append(leaf.grad)
    return against_truth([("dx", x.grad, *grads)])


def int32_check(ctx: Context):
    x = ctx.randn(*X, gen=ctx.generator(500), dtype=torch.float64)
    positions = torch.arange(4, 4 + X[-2], device=ctx.device)
    wide, narrow = run(ctx, x, positions), run(ctx, x, positions.int())
    if not torch.allclose(wide, narrow, rtol=0, atol=1e-12):
        return outcome("fail", Ev("int32 positions give a different result (by {d:.3g})", d=(wide - narrow).abs().max().item()))
    return outcome("pass", Ev("int32 and int64 positions agree"))


@dataclass(frozen=True)
class Probe:
    x: torch.Tensor
    positions: torch.Tensor

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.x.clone(), self.positions.clone())
        return out if isinstance(out, torch.Tensor) else None

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct rope" here.
        return rope(self.x, self.positions, variant=variant if isinstance(variant, RopeVariant) else RopeVariant())


class RopeTask:
    name = "rope"

    def checks(self, ctx: Context) -> list[CheckDef]:
        x = ctx.randn(*X, gen=ctx.generator(600))
        positions = torch.arange(X[-2], device=ctx.device)
        return [
            CheckDef("shape.4d", "shape", partial(shape_check, ctx, X, torch.float32)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, (4, 6, 6), torch.float32)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, (3, 1, 4), torch.float32)),
            CheckDef("shape.float64", "shape", partial(shape_check, ctx, (2, 7, 10), torch.float64)),
            CheckDef("numerical.from-0", "numerical", partial(numerical_check, ctx, X, range(5), None, 0)),
            CheckDef("numerical.offset", "numerical", partial(numerical_check, ctx, (3, 4, 16), range(37, 41), None, 1)),
            CheckDef("numerical.unordered", "numerical", partial(numerical_check, ctx, (2, 6, 12), (9, 0, 4, 4, 30, 1), None, 2)),
            CheckDef("numerical.base-500", "numerical", partial(numerical_check, ctx, (2, 5, 8), range(2, 7), 500.0, 3)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.relative-position", "numerical", partial(relative_check, ctx)),
            CheckDef("stability.norm-preserving", "stability", partial(norm_check, ctx)),
            CheckDef("gradient.x", "gradient", partial(gradient_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, x, positions), {"x": x, "positions": positions}),
            ),
            CheckDef("robustness.int32-positions", "robustness", partial(int32_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        """D = 4 and positions up to 2: a frequency not inverted turns pair 1 by at most 2 * 10000^(2/4) = 200 rad, where
        a float32 angle table (Meta's and Hugging Face's are) is off by ~1e-5, not the ~1e-3 it is at thousands of rad:
        the table's precision neither hides that variant nor passes for another mistake."""
        gen = ctx.generator(1100)
        x = ctx.randn(2, 3, 6, 4, gen=gen, dtype=torch.float64)
        return [Probe(x, torch.arange(6, device=ctx.device) % 3), Probe(x, torch.tensor([2, 0, 1, 1, 2, 0], device=ctx.device))]

    def hypotheses(self, ctx: Context):
        found = []
        for pairing in LAYOUTS:
            right = RopeVariant(pairing)
            found += [
                ("rope-frequency-exponent", replace(right, exponent="-i/D")),
                ("rope-frequency-exponent", replace(right, exponent="+2i/D")),
                ("rope-frequency-exponent", replace(right, exponent="-4i/D")),  # 2i divided by D/2, not D
                ("rope-frequency-exponent", replace(right, exponent="-2i/(D-2)")),  # the last pair reaches 1/base
                ("rope-rotation-direction", replace(right, sign=-1)),
                ("rope-sin-cos-swapped", replace(right, swapped=True)),
                ("rope-pairing-mismatch", replace(right, freqs=LAYOUTS[pairing == "interleaved"])),
                ("rope-positions-ignored", replace(right, ignores_positions=True)),
            ]
        return found


TASK = RopeTask()
