"""The ``softmax`` task: ``softmax(x, dim=-1)`` by hand, stable, without torch's softmax.

Softmax is invariant to a constant shift per slice along ``dim``, so the classic bugs hide on
ordinary inputs: no max shift overflows only at large logits, a max over the whole tensor only
underflows the slices far below it, and a missing ``keepdim`` only runs on square inputs. Each
gets the input that exposes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, first_nonfinite, moved, same_output
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.tolerance import judge
from drill.text.messages import Ev


@dataclass(frozen=True)
class SoftmaxVariant:
    """The correct softmax, or one mistake: where the max and the sum are taken, with or without keepdim."""

    max_over: str = "dim"  # dim | all (the whole tensor) | last (-1 whatever dim is)
    max_keepdim: bool = True
    sum_over: str = "dim"  # dim | all | last | first (0) | second-last (-2) | other (-2 if dim is last, else -1)
    sum_keepdim: bool = True


CORRECT = SoftmaxVariant()
FORBIDDEN = {  # __name__ of the torch function or aten op: how the rule names it
    "softmax": "softmax (torch.softmax, F.softmax, Tensor.softmax, nn.Softmax)",  # shown as is
    "log_softmax": "log_softmax",
    "softmin": "F.softmin",
    "special_softmax": "torch.special.softmax",
    "special_log_softmax": "torch.special.log_softmax",
    "_softmax": "torch._softmax",
    "_log_softmax": "torch._log_softmax",
    "_safe_softmax": "torch._safe_softmax",
}
# (id, shape, dim): sizes never coincide, so a softmax over another axis cannot hide.
SHAPE_CASES = (
    ("shape.2d", (5, 7), -1),
    ("shape.4d", (2, 3, 5, 7), -1),
    ("shape.1d", (7,), 0),
    ("shape.dim1", (3, 6, 4), 1),
)
WIDE, SMALL = 100.0, 2.0  # stability.wide-rows: a row from -100 to 100, exp(200) overflows float32; from -2 to 2 not
NUMERICAL_CASES = (("last-dim", (2, 3, 5, 7), -1), ("dim1", (3, 6, 4), 1), ("dim0", (6, 4, 5), 0), ("dim-2", (4, 5, 6), -2))


def softmax_reference(x, dim: int, variant=CORRECT):
    """exp(x - max) / sum, in x's dtype, with the mistake ``variant`` models."""
    variant = variant if isinstance(variant, SoftmaxVariant) else CORRECT  # the engine's baseline: the correct one
    other = -2 if dim % x.dim() == x.dim() - 1 else -1
    axis = {"dim": dim, "last": -1, "first": 0, "second-last": -2, "other": other}
    m = x.amax() if variant.max_over == "all" else x.amax(axis[variant.max_over], keepdim=variant.max_keepdim)
    e = (x - m).exp()
    s = e.sum() if variant.sum_over == "all" else e.sum(axis[variant.sum_over], keepdim=variant.sum_keepdim)
    return e / s


def run(ctx: Context, x, dim: int):
    out = ctx.call(ctx.entry, x, dim=dim)
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("returned {type}, not a tensor", type=type(out).__name__))
    return out


def versus_truth(label: str, out, x64, dim: int, dtype):
    same = softmax_reference(x64.to(dtype), dim)
    return against_truth([(label, out, softmax_reference(x64, dim), same)])


def shape_check(ctx: Context, shape, dim):
    x = ctx.randn(*shape, gen=ctx.generator(1))
    out = run(ctx, x, dim)
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} (dim={dim})", shape=list(out.shape), dim=dim))


def non_contiguous_check(ctx: Context):
    x = ctx.randn(7, 5, gen=ctx.generator(2)).t()
    out = run(ctx, x, -1)
    expect_shape(out, x.shape)
    again = run(ctx, x.contiguous(), -1)
    if not same_output(out, again, 1e-6):
        return outcome("fail", Ev("a transposed (non-contiguous) input gives a different output than its contiguous copy"))
    return versus_truth(Ev("output (non-contiguous input)"), out, x.double(), -1, torch.float32)


def numerical_check(ctx: Context, shape, dim, dtype, offset: int):
    x = ctx.randn(*shape, gen=ctx.generator(100 + offset), dtype=torch.float64)
    label = Ev("output (shape {shape}, dim={dim}, {dtype})", shape=list(shape), dim=dim, dtype=str(dtype)[6:])
    return versus_truth(label, run(ctx, x.to(dtype), dim), x, dim, dtype)


def neg_inf_check(ctx: Context):
    gen = ctx.generator(150)
    x = ctx.randn(4, 9, gen=gen, dtype=torch.float64)
    x[torch.rand(4, 9, generator=gen).to(ctx.device) < 0.4] = float("-inf")  # masked logits
    x[:, 4] = ctx.randn(4, gen=gen, dtype=torch.float64)  # every row keeps a finite entry
    return versus_truth(Ev("output (rows with -inf entries)"), run(ctx, x.float(), -1), x, -1, torch.float32)


def gradient_check(ctx: Context, dtype):
    gen = ctx.generator(200)
    x64 = ctx.randn(3, 6, 4, gen=gen, dtype=torch.float64)
    seed_grad = ctx.randn(3, 6, 4, gen=gen, dtype=torch.float64)
    x = x64.to(dtype).requires_grad_()
    out = run(ctx, x, 1)
    expect_shape(out, x.shape)
    ctx.call(lambda: (out * seed_grad.to(out.dtype)).sum().backward(), watch=False)
    if x.grad is None:
        return outcome("fail", Ev("no gradient reaches x (is it detached?)"))
    grads = []
    for precision in (torch.float64, dtype):
        leaf = x64.detach().clone().to(precision).requires_grad_()
        (softmax_reference(leaf, 1) * seed_grad.to(precision)).sum().backward()
        grads.append(leaf.grad)
    return against_truth([(Ev("dx (dim={dim})", dim=1), x.grad, *grads)])


def independent_slices_check(ctx: Context):
    """float64: changing one entry may move only its own slice along dim (softmax couples nothing else)."""
    gen = ctx.generator(300)
    for shape, dim in (((3, 4, 6), -1), ((3, 6, 4), 1)):
        x = ctx.randn(*shape, gen=gen, dtype=torch.float64)
        base = run(ctx, x, dim)
        expect_shape(base, shape)
        for where in ((0, 0, 0), (2, 3, 3)):
            x2 = x.clone()
            x2[where] += 5.0
            change = moved(run(ctx, x2, dim).movedim(dim, -1), base.movedim(dim, -1))  # one value per slice
            own = tuple(i for axis, i in enumerate(where) if axis != dim % len(shape))
            change[own] = 0
            if (change > LEAK_THRESHOLD).any():
                other = tuple(int(i) for i in (change > LEAK_THRESHOLD).nonzero()[0])
                return outcome(
                    "fail",
                    Ev("dim={dim}: changing x[{at}] moves the slice at {other} (by {by:.3g}): each slice along dim must be "
                       "normalised on its own", dim=dim, at=", ".join(map(str, where)), other=list(other), by=change[other].item()),
                )
    return outcome("pass", Ev("float64: changing one entry moves only its own slice along dim"))


def large_logits_check(ctx: Context, dtype, magnitude: float):
    """Logits near +-magnitude: exp overflows (or underflows to 0/0) unless the max is subtracted first.

    Beyond the usual rule it allows 4 eps * max|x|, the rounding of any intermediate as large as the
    logits (a log-sum-exp route computes x - (m + log s) at that magnitude)."""
    gen = ctx.generator(400)
    pairs = []
    for sign in (1, -1):
        x = (sign * magnitude + ctx.randn(4, 9, gen=gen, dtype=torch.float64)).to(dtype)
        out = run(ctx, x, -1)
        truth = softmax_reference(x.double(), -1)
        expect_shape(out, truth.shape)
        bad = first_nonfinite(out, truth)
        if bad is not None:
            return outcome(
                "fail",
                Ev("{dtype} logits ~{m:g}: non-finite output at {at}", dtype=str(dtype)[6:], m=sign * magnitude, at=list(bad)),
                "softmax-no-max-shift",
            )
        verdict = judge(out, truth, softmax_reference(x, -1))
        allowed = max(verdict.allowed, 4 * torch.finfo(dtype).eps * x.abs().max().item())
        label = Ev("logits ~{m:g} ({dtype})", m=sign * magnitude, dtype=str(dtype)[6:])
        if verdict.error > allowed:
            return outcome("fail", too_far(label, verdict.error, list(verdict.where), allowed))
        pairs.append((label, verdict.error, allowed))
    return outcome("pass", Ev.seq(finite_and_close(label, e, a) for label, e, a in pairs))


def too_far(label: Ev, error: float, where: list, allowed: float) -> Ev:
    """The large-logit checks allow more than the tolerance rule, so they word their verdicts themselves."""
    return Ev("{what}: max error {e:.3g} at {at} (allowed {a:.3g})", what=label, e=error, at=where, a=allowed)


def finite_and_close(label: Ev, error: float, allowed: float) -> Ev:
    return Ev("{label}: finite, max error {e:.2g} (allowed {a:.2g})", label=label, e=error, a=allowed)


def wide_rows_check(ctx: Context):
    """float32 rows spanning -WIDE..WIDE, every row's max the same (a max over the whole tensor is right here): only a
    shift by the max keeps every exponent <= 0; a shift by the min, the mean or nothing takes exp of up to 2 * WIDE,
    past float32's 88, though logits of one size (the large-logits check) hide it. The code only when the same rows
    scaled down are right: a sum over the wrong axis meets 0 / 0 here too, without any overflow."""
    x = WIDE * torch.tanh(ctx.randn(4, 9, gen=ctx.generator(450), dtype=torch.float64))
    x[:, 0], x[:, -1] = WIDE, -WIDE
    out = run(ctx, x.float(), -1)
    label = Ev("float32 rows spanning ±{w:g}", w=WIDE)
    truth = softmax_reference(x, -1)
    expect_shape(out, truth.shape)
    bad = first_nonfinite(out, truth)
    if bad is not None:
        small = x * (SMALL / WIDE)
        if versus_truth("", run(ctx, small.float(), -1), small, -1, torch.float32).status == "pass":
            return outcome("fail", Ev("{label}: non-finite output at {at}; the same rows scaled to ±{s:g} are right: exp overflowed",
                                      label=label, at=list(bad), s=SMALL), "softmax-no-max-shift")  # fmt: skip
        return outcome("fail", Ev("{label}: non-finite output at {at}, and the same rows scaled to ±{s:g} are wrong too",
                                  label=label, at=list(bad), s=SMALL))  # fmt: skip
    verdict = judge(out, truth, softmax_reference(x.float(), -1))
    allowed = max(verdict.allowed, 4 * torch.finfo(torch.float32).eps * WIDE)  # a log-sum-exp route rounds at 100
    if verdict.error > allowed:
        return outcome("fail", too_far(label, verdict.error, list(verdict.where), allowed))
    return outcome("pass", finite_and_close(label, verdict.error, allowed))


def row_offsets_check(ctx: Context):
    """float64 rows at offsets +600, 0, -600: the right softmax never sees a number below exp(-50);
    one shifted by the whole tensor's max computes exp(-1200) = 0 for the lowest row, and 0 / 0."""
    gen = ctx.generator(500)
    offsets = torch.tensor([600.0, 0.0, -600.0], dtype=torch.float64, device=ctx.device)[:, None]
    x = offsets + ctx.randn(3, 7, gen=gen, dtype=torch.float64)
    out = run(ctx, x, -1)
    truth = softmax_reference(x, -1)
    expect_shape(out, truth.shape)
    finite = torch.isfinite(out).all(dim=-1) & (out.sum(dim=-1) - 1).abs().lt(1e-6)
    if bool(finite[0]) and not bool(finite[2]):
        return outcome(
            "fail",
            Ev("rows with offsets +600, 0, -600 (float64): the -600 row comes out as {row}...: shifted by the whole tensor's max, "
               "its exps underflow to 0", row=out[2, :3].tolist()),
            "softmax-global-max",
        )
    return against_truth([(Ev("rows offset by +600, 0, -600 (float64)"), out, truth, truth)])


def varying_check(ctx: Context):
    gen = ctx.generator(600)
    for n, (shape, dim) in enumerate((((5, 7), -1), ((4, 6, 3), 0), ((2, 9), 1))):
        x = ctx.randn(*shape, gen=gen, dtype=torch.float64)
        label = Ev("call {n} (shape {shape}, dim={dim})", n=n + 1, shape=list(shape), dim=dim)
        result = versus_truth(label, run(ctx, x.float(), dim), x, dim, torch.float32)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different shapes and dims in a row all match"))


@dataclass(frozen=True)
class Probe:
    """Square inputs, so that a missing keepdim broadcasts instead of raising."""

    x: torch.Tensor
    dim: int

    def user(self, ctx: Context):
        return ctx.call(ctx.entry, self.x.clone(), dim=self.dim)

    def expected(self, variant):
        return softmax_reference(self.x, self.dim, variant)


class SoftmaxTask:
    name = "softmax"
    implies = {"softmax-keepdim-missing": {"reduction-without-keepdim"}}  # the shared code from the exception, named here
    forbidden = FORBIDDEN
    builtin_what = "softmax"
    builtin_code = "uses-builtin-softmax"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        defs.append(CheckDef("shape.non-contiguous", "shape", partial(non_contiguous_check, ctx)))
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [
                CheckDef(f"{prefix}.{name}", "numerical", partial(numerical_check, ctx, shape, dim, dtype, i))
                for i, (name, shape, dim) in enumerate(NUMERICAL_CASES)
            ]
            drawn = ctx.sizes(300, (1, 5), (2, 9), (3, 17))  # a shape and a dim drawn from the seed
            defs.append(CheckDef(f"{prefix}.drawn", "numerical", partial(numerical_check, ctx, drawn, ctx.sizes(301, (0, 2))[0], dtype, 9)))
            grad_id = dtype_id("gradient", dtype, "gradient.x")
            defs.append(CheckDef(grad_id, "gradient", partial(gradient_check, ctx, dtype)))
        x = ctx.randn(4, 6, gen=ctx.generator(700))
        defs += [
            CheckDef("numerical.neg-inf-entries", "numerical", partial(neg_inf_check, ctx)),
            CheckDef("mask-leak.independent-slices", "mask-leak", partial(independent_slices_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx, torch.float32, 1e4)),
            CheckDef("stability.large-logits.float16", "stability", partial(large_logits_check, ctx, torch.float16, 1e2)),
            CheckDef("stability.wide-rows", "stability", partial(wide_rows_check, ctx)),
            CheckDef("stability.row-offsets", "stability", partial(row_offsets_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx, lambda: run(ctx, x, -1), {"x": x})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        gen = ctx.generator(1100)
        square = ctx.randn(6, 6, gen=gen, dtype=torch.float64)
        cube = ctx.randn(1, 6, 6, gen=gen, dtype=torch.float64)
        return [Probe(square, -1), Probe(square, 0), Probe(square, 1), Probe(cube, -1), Probe(cube, 2)]

    def hypotheses(self, ctx: Context):
        return (
            ("softmax-keepdim-missing", SoftmaxVariant(max_keepdim=False)),
            ("softmax-keepdim-missing", SoftmaxVariant(sum_keepdim=False)),
            ("softmax-keepdim-missing", SoftmaxVariant(max_keepdim=False, sum_keepdim=False)),
            ("softmax-ignores-dim", SoftmaxVariant(max_over="last", sum_over="last")),
            ("softmax-wrong-sum-dim", SoftmaxVariant(sum_over="other")),
            ("softmax-wrong-sum-dim", SoftmaxVariant(sum_over="last")),
            ("softmax-wrong-sum-dim", SoftmaxVariant(sum_over="first")),
            ("softmax-wrong-sum-dim", SoftmaxVariant(sum_over="second-last")),
            ("softmax-wrong-sum-dim", SoftmaxVariant(sum_over="all")),
        )


TASK = SoftmaxTask()
