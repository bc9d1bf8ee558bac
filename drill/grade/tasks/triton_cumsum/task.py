"""The ``triton_cumsum`` task: ``cumsum(x)``, an inclusive prefix sum along the rows of ``[M, N]``, and the row
reductions ``row_sum(x)`` and ``row_max(x)`` returning ``[M]``, each by the user's own Triton kernels.

A scan and a reduction share the kernel bugs of softmax (the mask, the row stride, a block that must
divide N) and add one of their own: what the masked tail reads. 0 is right for a sum and wrong for a
max of negative rows, so row_max gets rows whose every value is below 0. On CPU the kernels run under
Triton's interpreter, inside guard bands (drill/grade/checks/kernels.py).
"""

from __future__ import annotations

from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.kernels import guarded, launch, sizes_check, strided_check, tensor_out
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.remote import UserCodeError

FORBIDDEN = {
    "cumsum": "torch.cumsum / Tensor.cumsum",
    "cumulative_trapezoid": "torch.cumulative_trapezoid",
    "sum": "torch.sum (the kernel reduces, not the launcher)",
    "amax": "torch.amax",
    "max": "torch.max",
    "logcumsumexp": "torch.logcumsumexp",
}
EDGE_SHAPES = ((1, 1), (3, 17), (2, 129), (4, 127))  # N not a multiple of any block; 129 crosses 128
DIVISIBLE = (3, 64)
REDUCTIONS = {"row_sum": lambda x: x.sum(-1), "row_max": lambda x: x.amax(-1)}


def truth_of(x: torch.Tensor):
    return x.double().cumsum(-1), x.cumsum(-1)


def call(ctx: Context, x) -> torch.Tensor:
    return tensor_out(launch(ctx, x))


def randn(ctx: Context, offset: int, shape, dtype=torch.float32):
    return ctx.randn(*shape, gen=ctx.generator(offset), dtype=dtype)


def handle(ctx: Context, name: str):
    found = ctx.user.entry(name)
    if found is None:
        raise UserCodeError(f"the file does not define {name}(x)", "not-implemented")
    return found


def shape_check(ctx: Context, shape):
    x = randn(ctx, 1, shape)
    out = call(ctx, x)
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", f"output {list(out.shape)}, {str(out.dtype)[6:]}")


@guarded
def numerical_check(ctx: Context, shape, offset: int):
    x = randn(ctx, offset, shape)
    return against_truth([(f"output (shape {list(shape)})", call(ctx, x), *truth_of(x))])


@guarded
def reduction_check(ctx: Context, name: str):
    """Each edge shape, then rows all below 0 (a max whose tail reads 0 returns 0)."""
    fn, op = handle(ctx, name), REDUCTIONS[name]
    cases = [(f"{name} (shape {list(s)})", randn(ctx, 800 + n, s)) for n, s in enumerate(EDGE_SHAPES)]
    cases.append((f"{name} (rows all below 0, shape [3, 17])", randn(ctx, 810, (3, 17)).abs().neg() - 1))
    pairs = []
    for label, x in cases:
        out = tensor_out(launch(ctx, x, fn=fn))
        problem = expect_like(out, (x.shape[0],), x, name)
        if problem:
            return outcome("fail", problem)
        pairs.append((label, out, op(x.double()), op(x)))
    return against_truth(pairs)


@guarded
def out_of_bounds_check(ctx: Context):
    """Edge tiles under the guard: every load and store of the three launchers must stay inside their tensors."""
    for shape in ((3, 17), (2, 129)):
        x = randn(ctx, 50, shape)
        call(ctx, x)
        for name in REDUCTIONS:
            launch(ctx, x, fn=handle(ctx, name))
    return outcome("pass", "shapes [3, 17] and [2, 129]: every load and store stayed inside the tensors")


@guarded
def varying_check(ctx: Context):
    for n, shape in enumerate(((4, 33), (2, 7), (3, 100))):
        x = randn(ctx, 600 + n, shape)
        result = against_truth([(f"call {n + 1} (shape {list(shape)})", call(ctx, x), *truth_of(x))])
        if result.status != "pass":
            return result
    return outcome("pass", "three calls with different shapes in a row all match")


class TritonCumsumTask:
    name = "triton_cumsum"
    forbidden = FORBIDDEN
    builtin_what = "cumsum, sum or max in the launcher"
    builtin_code = "kernel-uses-torch-op"

    def checks(self, ctx: Context) -> list[CheckDef]:
        run = partial(call, ctx)
        like = partial(randn, ctx, 200)
        drawn = ctx.sizes(300, (2, 6), (10, 200))
        x = randn(ctx, 700, (3, 20))
        return [
            CheckDef("shape.basic", "shape", partial(guarded(shape_check), ctx, (3, 7))),
            CheckDef("shape.one-element", "shape", partial(guarded(shape_check), ctx, (1, 1))),
            CheckDef("shape.row-strided", "shape", partial(strided_check, ctx, run, truth_of, randn(ctx, 2, (4, 19)), "output")),
            CheckDef("numerical.edge-sizes", "numerical", partial(guarded(sizes_check), ctx, run, truth_of, EDGE_SHAPES, DIVISIBLE, like)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, drawn, 301)),
            CheckDef("numerical.row-sum", "numerical", partial(reduction_check, ctx, "row_sum")),
            CheckDef("numerical.row-max", "numerical", partial(reduction_check, ctx, "row_max")),
            CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(guarded(no_mutation_check), ctx, lambda: run(x), {"x": x})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list:
        return []

    def hypotheses(self, ctx: Context):
        return ()


TASK = TritonCumsumTask()
