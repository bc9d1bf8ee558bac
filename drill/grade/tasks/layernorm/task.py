"""The ``layernorm`` task: ``layer_norm(x, weight, bias, eps=1e-5)`` over the last dim.

The reference is torch's own ``F.layer_norm`` (biased variance, eps inside the square root), run
in float64 for the truth and in the input's dtype for the same-precision baseline. The one-pass
variance ``E[x²] - E[x]²`` equals the two-pass one in float64, so no probe can tell them apart:
the large-offset check shows it instead, where float32 cancellation destroys the variance while
the same rows shifted to mean ~0 (LayerNorm is shift-invariant) still pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.rows import row_independence_check, tensor_result
from drill.grade.checks.variance import one_pass_verdict
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev

D = 6  # small, so the unbiased variance (D - 1) is 20% off
X = (2, 5, D)
SHAPE_CASES = (
    ("shape.3d", (2, 5, D), False),
    ("shape.2d", (7, 12), False),
    ("shape.one-row", (1, 1, 8), False),
    ("shape.non-contiguous", (3, 4, D), True),
)
OFFSET = 1000.0  # float32: E[x²] ~ 1e6 keeps ~0.06 of absolute error, the variance ~1 is lost

FORBIDDEN = {
    "layer_norm": "F.layer_norm / nn.LayerNorm",
    "native_layer_norm": "torch.native_layer_norm",
    "group_norm": "F.group_norm",
}


@dataclass(frozen=True)
class LayerNormVariant:
    correction: int = 0  # 1: unbiased variance (x.var() default)
    eps: str = "inside"  # inside: sqrt(var + eps) | outside: sqrt(var) + eps
    axis: object = -1  # -1 (correct) | -2 | 0 | "all" (x.mean() of the whole tensor)


CORRECT_LN = LayerNormVariant()


def reference(x, weight, bias, eps, variant: LayerNormVariant = CORRECT_LN):
    if variant == CORRECT_LN:
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    dims = tuple(range(x.dim())) if variant.axis == "all" else (variant.axis,)
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, correction=variant.correction)
    denom = torch.sqrt(var + eps) if variant.eps == "inside" else torch.sqrt(var) + eps
    return (x - mean) / denom * weight + bias


def params(ctx: Context, d: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    weight = 1 + 0.5 * ctx.randn(d, gen=gen, dtype=dtype)
    return weight, 0.5 * ctx.randn(d, gen=gen, dtype=dtype)


def run(ctx: Context, x, weight, bias, eps=None):
    args = (x, weight, bias) if eps is None else (x, weight, bias, eps)
    return tensor_result(ctx.call(ctx.entry, *args))


def shape_check(ctx: Context, shape, non_contiguous):
    gen = ctx.generator(1)
    if non_contiguous:
        x = ctx.randn(shape[1], shape[0], shape[2], gen=gen).transpose(0, 1)
    else:
        x = ctx.randn(*shape, gen=gen)
    weight, bias = params(ctx, shape[-1], 2, torch.float32)
    out = run(ctx, x, weight, bias)
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def two_pass(x, weight, bias, eps):
    """The textbook computation, as a user writes it."""
    centred = x - x.mean(dim=-1, keepdim=True)
    return centred / torch.sqrt((centred * centred).mean(dim=-1, keepdim=True) + eps) * weight + bias


def compare(ctx: Context, label, x64, weight64, bias64, dtype, eps=None):
    """(label, user, truth, same-precision): the baseline is the less accurate of torch's kernel and
    the two-pass formula in the input's dtype (torch's CPU kernel accumulates more carefully)."""
    args = (x64.to(dtype), weight64.to(dtype), bias64.to(dtype))
    e = 1e-5 if eps is None else eps
    truth = reference(x64, weight64, bias64, e)
    same = max((reference(*args, e), two_pass(*args, e)), key=lambda r: (r.double() - truth).abs().max().item())
    return label, run(ctx, *args, eps), truth, same  # the user's call last: it may modify its inputs


def numerical_check(ctx: Context, dtype, offset: int, shape=X):
    x = ctx.randn(*shape, gen=ctx.generator(100 + offset), dtype=torch.float64)
    weight, bias = params(ctx, shape[-1], 150 + offset)
    return against_truth([compare(ctx, Ev("output"), x, weight, bias, dtype)])


def eps_check(ctx: Context, eps: float):
    """Rows with a small variance, where eps matters: it must sit inside the square root."""
    x = 0.05 * ctx.randn(*X, gen=ctx.generator(160), dtype=torch.float64)
    weight, bias = params(ctx, D, 161)
    result = against_truth([compare(ctx, Ev("eps={eps:g}, row std ~0.05", eps=eps), x, weight, bias, torch.float32, eps)])
    if result.status == "pass":
        result.message = Ev("{what} (eps={eps:g} passed as an argument)", what=result.message, eps=eps)
    return result


def wide_rows_check(ctx: Context):
    x = 3 * ctx.randn(3, 4, 64, gen=ctx.generator(170), dtype=torch.float64)
    weight, bias = params(ctx, 64, 171)
    return against_truth([compare(ctx, "D=64", x, weight, bias, torch.float32)])


def gradient_check(ctx: Context):
    gen = ctx.generator(200)
    x64 = ctx.randn(*X, gen=gen, dtype=torch.float64)
    weight64, bias64 = params(ctx, D, 201)
    seed_grad = ctx.randn(*X, gen=gen, dtype=torch.float64)
    leaves = [t.float().requires_grad_() for t in (x64, weight64, bias64)]
    out = run(ctx, *leaves)
    expect_like(out, X, leaves[0])
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in (x64, weight64, bias64)]
        (reference(*refs, 1e-5) * seed_grad.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, truth, same in zip(("x", "weight", "bias"), leaves, grads[torch.float64], grads[torch.float32]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("d{name}", name=name), leaf.grad, truth, same))
    return against_truth(pairs)


def rows_check(ctx: Context):
    x = ctx.randn(*X, gen=ctx.generator(300), dtype=torch.float64)
    weight, bias = params(ctx, D, 301)
    return row_independence_check(ctx, lambda z: run(ctx, z, weight, bias), x, "layernorm-wrong-axis")


def large_offset_check(ctx: Context):
    """float32 rows around 1000 with std ~1: fine for the two-pass variance, lost by E[x²] - E[x]²."""
    noise = ctx.randn(*X[:-1], 32, gen=ctx.generator(400), dtype=torch.float64)
    x64 = (noise + OFFSET).float().double()  # exactly representable, and so is x - OFFSET
    weight, bias = params(ctx, 32, 401)
    out, centred_out = (run(ctx, x.float(), weight.float(), bias.float()) for x in (x64, x64 - OFFSET))

    def ref(variant):
        def both(centred):
            x = x64 - OFFSET if centred else x64
            truth = reference(x, weight, bias, 1e-5, variant)
            args = (x.float(), weight.float(), bias.float(), 1e-5)
            if variant != CORRECT_LN:
                return truth, reference(*args, variant)
            return truth, max((reference(*args), two_pass(*args)), key=lambda r: (r.double() - truth).abs().max().item())

        return both

    references = [(None, ref(CORRECT_LN))] + [(code, ref(v)) for code, v in HYPOTHESES]
    return one_pass_verdict(Ev("rows around {offset:g} with std ~1 (float32)", offset=OFFSET), out, centred_out, references)


def constant_row_check(ctx: Context):
    """A row of equal values has variance 0: the output must be the bias, finite."""
    x = ctx.randn(*X, gen=ctx.generator(500), dtype=torch.float64)
    x[0, 1] = 2.5
    x[1, 3] = -7.0
    weight, bias = params(ctx, D, 501)
    out = run(ctx, x.float(), weight.float(), bias.float())
    expect_like(out, X, x.float())
    for row in ((0, 1), (1, 3)):
        got = out[row]
        if not torch.isfinite(got).all():
            return outcome("fail", Ev("a constant row {row} (variance 0) gives a non-finite output: eps must keep the denominator > 0",
                                      row=list(row)))  # fmt: skip
        error = (got.double() - bias).abs().max().item()
        if error > 1e-4:
            return outcome("fail", Ev("a constant row {row} gives {got}, expected the bias (error {e:.3g})",
                                      row=list(row), got=got.tolist(), e=error))  # fmt: skip
    return outcome("pass", Ev("rows of equal values give the bias, finite"))


@dataclass(frozen=True)
class Probe:
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor
    eps: float

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.x.clone(), self.weight.clone(), self.bias.clone(), self.eps)
        return out if isinstance(out, torch.Tensor) else None

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct layer norm" here.
        variant = variant if isinstance(variant, LayerNormVariant) else CORRECT_LN
        return reference(self.x, self.weight, self.bias, self.eps, variant)


HYPOTHESES = (
    ("layernorm-unbiased-variance", LayerNormVariant(correction=1)),
    ("layernorm-eps-outside-sqrt", LayerNormVariant(eps="outside")),
    ("layernorm-wrong-axis", LayerNormVariant(axis=-2)),
    ("layernorm-wrong-axis", LayerNormVariant(axis=0)),
    ("layernorm-wrong-axis", LayerNormVariant(axis="all")),
    ("layernorm-wrong-axis", LayerNormVariant(axis=-2, correction=1)),
    ("layernorm-wrong-axis", LayerNormVariant(axis="all", correction=1)),
)


class LayerNormTask:
    name = "layernorm"
    forbidden = FORBIDDEN
    builtin_what = Ev("layer norm")
    builtin_code = "uses-builtin-layernorm"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, dtype, i)) for i in range(2)]
            drawn = ctx.sizes(300, (1, 5), (2, 9), (3, 40))  # a shape drawn from the seed
            defs.append(CheckDef(f"{prefix}.drawn", "numerical", partial(numerical_check, ctx, dtype, 9, drawn)))
        x = ctx.randn(*X, gen=ctx.generator(600))
        weight, bias = params(ctx, D, 601, torch.float32)
        return defs + [
            CheckDef("numerical.eps-default", "numerical", partial(eps_check, ctx, 1e-5)),
            CheckDef("numerical.eps-0.01", "numerical", partial(eps_check, ctx, 1e-2)),
            CheckDef("numerical.wide-rows", "numerical", partial(wide_rows_check, ctx)),
            CheckDef("gradient.x-weight-bias", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.rows", "mask-leak", partial(rows_check, ctx)),
            CheckDef("stability.large-offset", "stability", partial(large_offset_check, ctx)),
            CheckDef("stability.constant-row", "stability", partial(constant_row_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, x, weight, bias), {"x": x, "weight": weight, "bias": bias}),
            ),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        gen = ctx.generator(1100)
        x = ctx.randn(3, 5, D, gen=gen, dtype=torch.float64)
        weight, bias = params(ctx, D, 1101)
        return [Probe(x, weight, bias, 1e-5), Probe(0.1 * x, weight, bias, 0.05)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = LayerNormTask()
