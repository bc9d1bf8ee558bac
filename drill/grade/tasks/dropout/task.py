"""The ``dropout`` task: ``dropout(x, p, training, generator=None)``, inverted dropout by hand.

A random mask has no float64 reference to compare against, so the training branch is graded by what
every correct mask shares: each output element is 0 or x / (1 - p), the kept fraction is 1 - p within a
few standard deviations of a large draw, the mean is preserved, every element is drawn on its own, and
the same seed gives the same mask. p = 0, p = 1 and eval are graded exactly. Each classic bug is named
by the one check whose evidence proves it, so a wrong scale is not reported three times.
"""

from __future__ import annotations

import math
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.user.wire import Generator
from drill.text.messages import Ev

FORBIDDEN = {
    "dropout": "F.dropout / nn.Dropout",
    "native_dropout": "torch.ops.aten.native_dropout",
    "feature_dropout": "F.dropout2d / F.dropout3d",
    "alpha_dropout": "F.alpha_dropout",
    "_fused_dropout": "torch._fused_dropout",
}
SIGMAS = 6.0  # a kept fraction this many standard deviations from 1 - p does not happen by chance


def nonzero_input(ctx: Context, shape, offset: int, dtype=torch.float32) -> torch.Tensor:
    """Values at least 0.5 away from 0, so a kept element is never mistaken for a dropped one."""
    z = ctx.randn(*shape, gen=ctx.generator(offset), dtype=torch.float64)
    return (z.sign() + (z == 0).double()) * (0.5 + z.abs())


def run(ctx: Context, x, p, training, generator=None):
    out = tensor_result(ctx.call(ctx.entry, x, p, training, generator))
    problem = expect_like(out, x.shape, x)
    if problem:
        raise _Mismatch(outcome("fail", problem))
    return out


class _Mismatch(Exception):
    """A dtype or device that differs from x's: the check fails with that message."""

    def __init__(self, check):
        super().__init__(check.message)
        self.check = check


def guarded(fn):
    """Run a check; a dtype/device mismatch becomes its failure."""

    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _Mismatch as exc:
            return exc.check

    return wrapper


def seed_of(ctx: Context, offset: int) -> Generator:
    return Generator(ctx.seed * 1000 + offset, "cuda" if ctx.device.type == "cuda" else "cpu")


@guarded
def shape_check(ctx: Context, shape, non_contiguous: bool):
    x = nonzero_input(ctx, shape, 1)
    if non_contiguous:
        x = x.transpose(0, -1).contiguous().transpose(0, -1)
    run(ctx, x, 0.3, True, seed_of(ctx, 1))
    return outcome("pass", Ev("output {shape}, x's dtype and device", shape=list(shape)))


@guarded
def eval_check(ctx: Context, dtype=torch.float32):
    """training=False: x exactly, whatever p is."""
    shape = ctx.sizes(10, (3, 9), (10, 40))
    x = nonzero_input(ctx, shape, 10, dtype)
    for p in (0.4, 0.75):
        out = run(ctx, x, p, False, seed_of(ctx, 10))
        if torch.equal(out, x):
            continue
        ratio = (out.double() / x.double()).nan_to_num(nan=0.0)
        if (ratio == 0).any():
            return outcome("fail", Ev("training=False, p={p}: {zeroed} of {n} elements zeroed (dropout still active)", p=p,
                                      zeroed=int((ratio == 0).sum()), n=x.numel()), "dropout-active-in-eval")  # fmt: skip
        for scale, what in ((1 / (1 - p), "1 / (1 - p)"), (1 - p, "1 - p")):
            if torch.allclose(ratio, torch.full_like(ratio, scale), rtol=1e-5, atol=0):
                return outcome("fail", Ev("training=False, p={p}: the output is x·{scale}, expected x unchanged", p=p, scale=what),
                               "dropout-rescale-in-eval")  # fmt: skip
        return outcome("fail", Ev("training=False, p={p}: the output differs from x by up to {diff:.3g}", p=p,
                                  diff=(out.double() - x.double()).abs().max().item()))  # fmt: skip
    return outcome("pass", Ev("training=False returns x exactly ({dtype}, x {shape}, p 0.4 and 0.75)", dtype=str(dtype)[6:],
                              shape=list(shape)))  # fmt: skip


@guarded
def edge_check(ctx: Context, p: float):
    """training=True at p = 0 (x exactly) and p = 1 (zeros exactly, no 0 / 0)."""
    x = nonzero_input(ctx, (6, 11), 20)
    out = run(ctx, x, p, True, seed_of(ctx, 20))
    expected = x if p == 0 else torch.zeros_like(x)
    if torch.equal(out, expected):
        return outcome("pass", Ev("p={p:g}: x unchanged, exactly", p=p) if p == 0 else Ev("p={p:g}: all zeros, exactly", p=p))
    bad = ~torch.isfinite(out)
    if bad.any():
        where = [int(i) for i in bad.nonzero()[0]]
        return outcome("fail", Ev("p={p:g}: {value} at {at}, expected {expected} (0 / 0 from dividing by 1 - p?)", p=p,
                                  value=out[tuple(where)].item(), at=where, expected="x" if p == 0 else "0"),
                       *(["dropout-p1-nan"] if p == 1 else []))  # fmt: skip
    diff = (out.double() - expected.double()).abs().max().item()
    if p == 0:
        return outcome("fail", Ev("p={p:g}: expected x unchanged, max difference {diff:.3g}", p=p, diff=diff))
    return outcome("fail", Ev("p={p:g}: expected all zeros, max difference {diff:.3g}", p=p, diff=diff))


def kept_and_scale(out: torch.Tensor, x: torch.Tensor):
    """(kept fraction, the scale of the kept elements, the largest relative spread of that scale)."""
    out, x = out.detach().double(), x.double()
    kept = out != 0
    if not kept.any():
        return 0.0, float("nan"), 0.0
    ratio = out[kept] / x[kept]
    scale = ratio.median().item()
    return kept.double().mean().item(), scale, ((ratio - scale).abs() / abs(scale)).max().item()


def close_fraction(f: float, target: float, n: int) -> bool:
    return abs(f - target) <= SIGMAS * math.sqrt(target * (1 - target) / n) + 1e-9


@guarded
def statistics_check(ctx: Context, offset: int, p: float, dtype=torch.float32, shape=None):
    """A large draw: every kept element scaled by 1 / (1 - p), the kept fraction 1 - p; the bug named from both."""
    shape = shape or ctx.sizes(30 + offset, (150, 230), (240, 330))
    x = nonzero_input(ctx, shape, 30 + offset, dtype)
    out = run(ctx, x, p, True, seed_of(ctx, 30 + offset))
    if not torch.isfinite(out).all():
        return outcome("fail", Ev("p={p}: non-finite output at {at}", p=p, at=[int(i) for i in (~torch.isfinite(out)).nonzero()[0]]))
    f, scale, spread = kept_and_scale(out, x)
    n = x.numel()
    what = Ev("p={p}, x {shape} ({dtype})", p=p, shape=list(shape), dtype=str(dtype)[6:])
    rounding = 4 * torch.finfo(dtype).eps
    if spread > rounding:
        return outcome("fail", Ev("{what}: the kept elements are not all x times one scale (spread {spread:.3g})", what=what,
                                  spread=spread))  # fmt: skip
    right_f, keep_f = close_fraction(f, 1 - p, n), close_fraction(f, p, n)
    is_scale = lambda s: abs(scale - s) <= rounding * s  # noqa: E731
    if right_f and is_scale(1 / (1 - p)):
        return outcome("pass", Ev("{what}: kept {f:.4f} (expected {keep:g}), kept elements scaled by {scale:.6g} = 1 / (1 - p)", what=what,
                                  f=f, keep=1 - p, scale=scale))  # fmt: skip
    found = Ev("{what}: kept fraction {f:.4f}, kept elements scaled by {scale:.6g}; expected {keep:g} and 1 / (1 - p) = {inverse:.6g}",
               what=what, f=f, scale=scale, keep=1 - p, inverse=1 / (1 - p))  # fmt: skip
    if keep_f and not right_f:
        return outcome("fail", Ev("{found} (p used as the keep probability)", found=found), "dropout-p-as-keep")
    if right_f and is_scale(1.0):
        return outcome("fail", Ev("{found} (no rescale)", found=found), "dropout-no-rescale")
    return outcome("fail", found)


@guarded
def mean_check(ctx: Context):
    """x = 1 everywhere: the output's mean stays 1 (within the draw's standard error)."""
    p, shape = 0.35, ctx.sizes(40, (90, 130), (140, 200))
    x = torch.ones(shape, device=ctx.device)
    out = run(ctx, x, p, True, seed_of(ctx, 40)).double()
    mean, n = out.mean().item(), x.numel()
    error = SIGMAS * math.sqrt(p / (1 - p) / n)  # each element is 1 / (1 - p) w.p. 1 - p, else 0: variance p / (1 - p)
    if abs(mean - 1) > error:
        return outcome("fail", Ev("x = 1 {shape}, p={p}: the output's mean is {mean:.4f}, expected 1 ± {error:.3f}", shape=list(shape), p=p,
                                  mean=mean, error=error))  # fmt: skip
    return outcome("pass", Ev("x = 1 {shape}, p={p}: mean {mean:.4f} (1 ± {error:.3f})", shape=list(shape), p=p, mean=mean, error=error))


@guarded
def gradient_check(ctx: Context):
    """d out / d x is the mask scaled by 1 / (1 - p), read from the call's own output."""
    p = 0.3
    x = nonzero_input(ctx, (7, 13), 50)
    leaf = x.detach().clone().requires_grad_()
    out = run(ctx, leaf, p, True, seed_of(ctx, 50))
    seed = ctx.randn(*x.shape, gen=ctx.generator(201), dtype=torch.float64)
    ctx.call(lambda: (out * seed.to(out.dtype)).sum().backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches x (is the output detached?)"))
    kept = (out.detach() != 0).double()
    truth = seed * kept / (1 - p)
    return against_truth([(Ev("dx (the mask of the same call, / (1 - p))"), leaf.grad, truth, truth.float())])


@guarded
def independence_check(ctx: Context):
    """p = 0.5 on x [B, T, D]: no two slices along any dim share a mask (a shared one: the same elements dropped)."""
    b, t, d = ctx.sizes(60, (5, 8), (9, 13), (17, 23))
    x = nonzero_input(ctx, (b, t, d), 60)
    kept = run(ctx, x, 0.5, True, seed_of(ctx, 60)) != 0
    for dim, name in ((0, Ev("sample of the batch")), (1, Ev("position")), (2, Ev("feature"))):
        slices = kept.movedim(dim, 0).reshape(kept.shape[dim], -1)
        if slices.shape[1] < 40:
            continue
        first, second = slices[0], slices[1]
        if torch.equal(first, second) and torch.equal(slices[0], slices[-1]):
            return outcome("fail", Ev("x [{b}, {t}, {d}], p=0.5: every {name} has the same mask (the mask is shared along dim {dim})", b=b,
                                      t=t, d=d, name=name, dim=dim), "dropout-mask-shared")  # fmt: skip
    return outcome("pass", Ev("x [{b}, {t}, {d}], p=0.5: every sample, position and feature gets its own draw", b=b, t=t, d=d))


@guarded
def generator_check(ctx: Context):
    """Generators seeded alike give the same output, seeded differently another one."""
    x = nonzero_input(ctx, (9, 14), 70)
    first = run(ctx, x, 0.4, True, seed_of(ctx, 70))
    again = run(ctx, x, 0.4, True, seed_of(ctx, 70))
    other = run(ctx, x, 0.4, True, seed_of(ctx, 71))
    if not torch.equal(first, again):
        return outcome("fail", Ev("two calls with generators of the same seed give different masks"), "dropout-ignores-generator")
    if torch.equal(first, other):
        return outcome("fail", Ev("generators of different seeds give the same mask (a fixed seed inside?)"), "dropout-ignores-generator")
    return outcome("pass", Ev("the same seed gives the same mask, another seed another mask"))


class DropoutTask:
    name = "dropout"
    forbidden = FORBIDDEN
    builtin_what = "dropout"
    builtin_code = "uses-builtin-dropout"

    def checks(self, ctx: Context) -> list[CheckDef]:
        x = nonzero_input(ctx, (5, 12), 90)
        defs = [
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (7, 13), False)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, (3, 5, 11), False)),
            CheckDef("shape.1d", "shape", partial(shape_check, ctx, (17,), False)),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, (6, 9), True)),
        ]
        for dtype in ctx.dtypes:
            defs.append(CheckDef(dtype_id("numerical.eval", dtype), "numerical", partial(eval_check, ctx, dtype)))
        defs += [
            CheckDef("numerical.p0", "numerical", partial(edge_check, ctx, 0.0)),
            CheckDef("numerical.p1", "numerical", partial(edge_check, ctx, 1.0)),
            CheckDef("numerical.statistics", "numerical", partial(statistics_check, ctx, 0, 0.3)),
            CheckDef("numerical.statistics-p0.6", "numerical", partial(statistics_check, ctx, 1, 0.6)),
            CheckDef("numerical.float64", "numerical", partial(statistics_check, ctx, 2, 0.25, torch.float64)),
        ]
        defs += [CheckDef(dtype_id("numerical.statistics", dt), "numerical", partial(statistics_check, ctx, 3, 0.3, dt))
                 for dt in ctx.dtypes if dt != torch.float32]  # fmt: skip
        return defs + [
            CheckDef("numerical.mean-preserved", "numerical", partial(mean_check, ctx)),
            CheckDef("gradient.x", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.independent-elements", "mask-leak", partial(independence_check, ctx)),
            CheckDef("stability.p-0.99", "stability", partial(statistics_check, ctx, 80, 0.99, shape=(300, 331))),
            CheckDef("robustness.generator", "robustness", partial(generator_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, x, 0.3, True, seed_of(ctx, 90)), {"x": x})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list:
        return []  # random outputs: every code comes from the check that proves it

    def hypotheses(self, ctx: Context):
        return ()


TASK = DropoutTask()
