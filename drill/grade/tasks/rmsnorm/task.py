"""The ``rmsnorm`` task: ``rms_norm(x, weight, eps=1e-6)`` over the last dim, as in LLaMA.

``weight * x / sqrt(mean(x²) + eps)``: no mean subtracted, no bias. The float32 reference is
torch's own ``F.rms_norm`` in float64. Half-precision inputs follow LLaMA's ``RMSNorm``: the
statistics and the normalisation in float32, cast back to the input's dtype, then the weight; so
the half checks compare against that computation (float64 truth, the same steps in the input's
dtype as the baseline). They run on the CPU too: float16 activations of a few hundred square
past float16's maximum (65504), which is what the LLaMA recipe is for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, first_nonfinite
from drill.grade.checks.rows import row_independence_check, tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev

D = 6
X = (2, 5, D)
SHAPE_CASES = (
    ("shape.3d", (2, 5, D), False),
    ("shape.2d", (7, 12), False),
    ("shape.one-row", (1, 1, 8), False),
    ("shape.non-contiguous", (3, 4, D), True),
)
LARGE = 300.0  # float16: x² above 65504 overflows to inf
HALVES = (torch.float16, torch.bfloat16)
VALUES_RIGHT = Ev("the values are right: the result is not cast back")

FORBIDDEN = {
    "rms_norm": "F.rms_norm / nn.RMSNorm",
    "_fused_rms_norm": "torch._fused_rms_norm",
}


@dataclass(frozen=True)
class RmsNormVariant:
    centre: str = "none"  # none (correct) | both: (x - mean) / std | stats: x / std (variance about the mean)
    correction: int = 0  # with centring: 1 = x.var() default
    eps: str = "inside"  # inside: sqrt(ms + eps) | outside: sqrt(ms) + eps | no-sqrt: ms + eps


CORRECT_RMS = RmsNormVariant()


def reference(x, weight, eps, variant: RmsNormVariant = CORRECT_RMS):
    """In x's dtype: torch's kernel for float32/64; the variants for the diagnosis (float64)."""
    if variant == CORRECT_RMS:
        return F.rms_norm(x, (x.shape[-1],), weight, eps)
    if variant.centre == "none":
        ms = x.pow(2).mean(dim=-1, keepdim=True)
    else:
        ms = x.var(dim=-1, keepdim=True, correction=variant.correction)
    denom = {"inside": lambda: torch.sqrt(ms + eps), "outside": lambda: torch.sqrt(ms) + eps, "no-sqrt": lambda: ms + eps}
    num = x - x.mean(dim=-1, keepdim=True) if variant.centre == "both" else x
    return weight * num / denom[variant.eps]()


def llama(x, weight, eps):
    """LLaMA's RMSNorm: statistics in float32 (float64 stays float64), cast back, then the weight."""
    h = x.double() if x.dtype == torch.float64 else x.float()
    h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def make_weight(ctx: Context, d: int, offset: int, dtype=torch.float64):
    return 1 + 0.5 * ctx.randn(d, gen=ctx.generator(offset), dtype=dtype)


def run(ctx: Context, x, weight, eps=None):
    args = (x, weight) if eps is None else (x, weight, eps)
    return tensor_result(ctx.call(ctx.entry, *args))


def shape_check(ctx: Context, shape, non_contiguous):
    gen = ctx.generator(1)
    x = ctx.randn(shape[1], shape[0], shape[2], gen=gen).transpose(0, 1) if non_contiguous else ctx.randn(*shape, gen=gen)
    out = run(ctx, x, make_weight(ctx, shape[-1], 2, torch.float32))
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def compare(ctx: Context, label, x64, weight64, dtype, eps=None):
    """(label, user, truth, same-precision); the baselines are computed before the user's call."""
    e = 1e-6 if eps is None else eps
    x, weight = x64.to(dtype), weight64.to(dtype)
    if dtype in HALVES:
        truth, same = llama(x.double(), weight.double(), e), llama(x, weight, e)
    else:
        truth, same = reference(x64, weight64, e), reference(x, weight, e)
    out = run(ctx, x, weight, eps)
    problem = expect_like(out, x.shape, x, label)
    if problem and out.dtype == x.dtype:
        raise _Mismatch(problem)
    return label, out, truth, same


class _Mismatch(Exception):
    """The output's device differs from the input's: a finding, not a crash."""


def judged(pairs_fn):
    """The values judged whatever the output's dtype; one left in float32 for a half input is named apart
    (its values may be right: computing in float32 is the recipe, only the cast back is missing)."""
    try:
        pairs = pairs_fn()
    except _Mismatch as exc:
        return outcome("fail", exc.args[0])
    result = against_truth(pairs)
    label, out, _, same = pairs[0]
    if out.dtype == same.dtype:
        return result
    uncast = Ev("{what} dtype is {dtype}, the input's is {expected}", what=label, dtype=str(out.dtype), expected=str(same.dtype))
    if result.status == "pass":
        return outcome("fail", Ev.seq([uncast, VALUES_RIGHT]), "rmsnorm-not-cast-back")
    return outcome("fail", Ev.seq([uncast, result.message]), "rmsnorm-not-cast-back")


def numerical_check(ctx: Context, dtype, offset: int, scale: float = 1.0, shape=X):
    x = scale * ctx.randn(*shape, gen=ctx.generator(100 + offset), dtype=torch.float64)
    weight = make_weight(ctx, shape[-1], 150 + offset)
    return judged(lambda: [compare(ctx, Ev("output ({dtype})", dtype=str(dtype)[6:]), x, weight, dtype)])


def eps_check(ctx: Context, eps: float | None):
    """Rows with a tiny root mean square, where eps matters: it must sit inside the square root."""
    x = 1e-3 * ctx.randn(*X, gen=ctx.generator(160), dtype=torch.float64)
    weight = make_weight(ctx, D, 161)
    label = Ev("rms ~1e-3, default eps") if eps is None else Ev("rms ~1e-3, eps={eps:g}", eps=eps)
    return judged(lambda: [compare(ctx, label, x, weight, torch.float32, eps)])


def half_overflow_check(ctx: Context):
    """float16 rows with values of a few hundred: x² overflows float16, so the statistics need float32."""
    x = LARGE * ctx.randn(*X[:-1], 16, gen=ctx.generator(170), dtype=torch.float64)
    weight = make_weight(ctx, 16, 171)
    result = judged(lambda: [compare(ctx, Ev("float16 rows with |x| up to ~{x:g}", x=3 * LARGE), x, weight, torch.float16)])
    if result.status == "pass" or result.message.endswith(VALUES_RIGHT):  # float32 all through, only the cast missing
        return result
    as_float = judged(lambda: [compare(ctx, Ev("the same rows in float32"), x.half().double(), weight.half().double(), torch.float32)])
    if as_float.status == "pass":
        return outcome(
            "fail",
            Ev.seq([result.message, Ev("the same values in float32 pass: the statistics are computed in float16 (x² above 65504 is inf)")]),
            *result.codes,
            "rmsnorm-stats-in-half",
        )
    return result


def gradient_check(ctx: Context):
    gen = ctx.generator(200)
    x64 = ctx.randn(*X, gen=gen, dtype=torch.float64)
    weight64 = make_weight(ctx, D, 201)
    seed_grad = ctx.randn(*X, gen=gen, dtype=torch.float64)
    leaves = [t.float().requires_grad_() for t in (x64, weight64)]
    out = run(ctx, *leaves)
    expect_like(out, X, leaves[0])
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in (x64, weight64)]
        (reference(*refs, 1e-6) * seed_grad.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, truth, same in zip(("x", "weight"), leaves, grads[torch.float64], grads[torch.float32]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("d{name}", name=name), leaf.grad, truth, same))
    return against_truth(pairs)


def rows_check(ctx: Context):
    x = ctx.randn(*X, gen=ctx.generator(300), dtype=torch.float64)
    weight = make_weight(ctx, D, 301)
    return row_independence_check(ctx, lambda z: run(ctx, z, weight), x)


def zero_row_check(ctx: Context):
    """An all-zero row: eps keeps the denominator positive, so the output is 0, finite."""
    x = ctx.randn(*X, gen=ctx.generator(500))
    x[1, 2] = 0.0
    out = run(ctx, x, make_weight(ctx, D, 501, torch.float32))
    expect_like(out, X, x)
    bad = first_nonfinite(out, torch.zeros_like(out))
    if bad is not None:
        return outcome("fail", Ev("an all-zero row gives a non-finite output at {at}: 0 / sqrt(0 + eps) is 0", at=list(bad)))
    if out[1, 2].abs().max().item() != 0:
        return outcome("fail", Ev("an all-zero row gives {got}, expected zeros", got=out[1, 2].tolist()))
    return outcome("pass", Ev("an all-zero row gives zeros, finite"))


@dataclass(frozen=True)
class Probe:
    x: torch.Tensor
    weight: torch.Tensor
    eps: float

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.x.clone(), self.weight.clone(), self.eps)
        return out if isinstance(out, torch.Tensor) else None

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct RMSNorm" here.
        variant = variant if isinstance(variant, RmsNormVariant) else CORRECT_RMS
        return reference(self.x, self.weight, self.eps, variant)


HYPOTHESES = (
    ("rmsnorm-mean-centred", RmsNormVariant(centre="both")),
    ("rmsnorm-mean-centred", RmsNormVariant(centre="both", correction=1)),
    ("rmsnorm-mean-centred", RmsNormVariant(centre="stats")),
    ("rmsnorm-mean-centred", RmsNormVariant(centre="stats", correction=1)),
    ("rmsnorm-eps-outside-sqrt", RmsNormVariant(eps="outside")),
    ("rmsnorm-sqrt-missing", RmsNormVariant(eps="no-sqrt")),
)


class RmsNormTask:
    name = "rmsnorm"
    forbidden = FORBIDDEN
    builtin_what = "RMSNorm"
    builtin_code = "uses-builtin-rmsnorm"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        defs += [CheckDef(f"numerical.seed{i}", "numerical", partial(numerical_check, ctx, torch.float32, i)) for i in range(2)]
        defs += [
            CheckDef(f"numerical.{str(dtype)[6:]}", "numerical", partial(numerical_check, ctx, dtype, 2 + n, 2.0))
            for n, dtype in enumerate(HALVES)
        ]
        x = ctx.randn(*X, gen=ctx.generator(600))
        weight = make_weight(ctx, D, 601, torch.float32)
        return defs + [
            CheckDef("numerical.eps-default", "numerical", partial(eps_check, ctx, None)),
            CheckDef("numerical.eps-1e-4", "numerical", partial(eps_check, ctx, 1e-4)),
            CheckDef("numerical.wide-rows", "numerical", partial(numerical_check, ctx, torch.float32, 7, 3.0, (3, 4, 64))),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, torch.float32, 8, 1.0, ctx.sizes(300, (1, 5), (2, 9), (3, 40)))),
            CheckDef("gradient.x-weight", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.rows", "mask-leak", partial(rows_check, ctx)),
            CheckDef("stability.float16-large", "stability", partial(half_overflow_check, ctx)),
            CheckDef("stability.zero-row", "stability", partial(zero_row_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, x, weight), {"x": x, "weight": weight}),
            ),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        gen = ctx.generator(1100)
        x = ctx.randn(3, 5, D, gen=gen, dtype=torch.float64) + 0.7  # a non-zero mean: centring shows
        weight = make_weight(ctx, D, 1101)
        return [Probe(x, weight, 1e-6), Probe(0.2 * x, weight, 0.05)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = RmsNormTask()
