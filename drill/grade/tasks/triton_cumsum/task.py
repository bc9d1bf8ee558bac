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

from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.kernels import (EDGE_SHAPES, KernelTask, Rows, bench_rows, closing_checks, guarded, launch, opening_checks,
                                        out_of_bounds, randn, rows_bytes, tensor_out)  # fmt: skip
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.kernel_bench import Case, KernelBench
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

FORBIDDEN = {
    "cumsum": "torch.cumsum / Tensor.cumsum",
    "cumulative_trapezoid": "torch.cumulative_trapezoid",
    "sum": Ev("torch.sum (the kernel reduces, not the launcher)"),  # the rule shows it (battery.rules_check)
    "amax": "torch.amax",
    "max": "torch.max",
    "logcumsumexp": "torch.logcumsumexp",
}
REDUCTIONS = {"row_sum": lambda x: x.sum(-1), "row_max": lambda x: x.amax(-1)}
BENCH_CASES = tuple(Case({"M": 4096, "N": n}, "float32") for n in (1024, 4096, 8192))  # the task is float32


def truth_of(x: torch.Tensor):
    return x.double().cumsum(-1), x.cumsum(-1)


def call(ctx: Context, x) -> torch.Tensor:
    return tensor_out(launch(ctx, x))


def handle(ctx: Context, name: str):
    found = ctx.user.entry(name)
    if found is None:
        raise UserCodeError(Ev("the file does not define {name}(x)", name=name), "not-implemented")
    return found


@guarded
def reduction_check(ctx: Context, name: str):
    """Each edge shape, then rows all below 0 (a max whose tail reads 0 returns 0)."""
    fn, op = handle(ctx, name), REDUCTIONS[name]
    cases = [(Ev("{name} (shape {shape})", name=name, shape=list(s)), randn(ctx, 800 + n, s)) for n, s in enumerate(EDGE_SHAPES)]
    cases.append((Ev("{name} (rows all below 0, shape [3, 17])", name=name), randn(ctx, 810, (3, 17)).abs().neg() - 1))
    pairs = []
    for label, x in cases:
        out = tensor_out(launch(ctx, x, fn=fn))
        problem = expect_like(out, (x.shape[0],), x, name)
        if problem:
            return outcome("fail", problem)
        pairs.append((label, out, op(x.double()), op(x)))
    return against_truth(pairs)


def launch_all(ctx: Context, x: torch.Tensor) -> None:
    """cumsum, row_sum and row_max on x: the three launchers under the guard."""
    call(ctx, x)
    for name in REDUCTIONS:
        launch(ctx, x, fn=handle(ctx, name))


class TritonCumsumTask(KernelTask):
    name = "triton_cumsum"
    forbidden = FORBIDDEN
    builtin_what = Ev("cumsum, sum or max in the launcher")
    bench = KernelBench("memory", BENCH_CASES, bench_rows, lambda x: torch.cumsum(x, -1), "torch.cumsum", rows_bytes)

    def checks(self, ctx: Context) -> list[CheckDef]:
        rows = Rows(ctx, partial(call, ctx), truth_of, partial(randn, ctx))
        x = randn(ctx, 700, (3, 20))
        return [
            *opening_checks(rows),
            CheckDef("numerical.row-sum", "numerical", partial(reduction_check, ctx, "row_sum")),
            CheckDef("numerical.row-max", "numerical", partial(reduction_check, ctx, "row_max")),
            out_of_bounds(rows, partial(launch_all, ctx)),
            *closing_checks(rows, lambda: rows.call(x), {"x": x}),
        ]


TASK = TritonCumsumTask()
