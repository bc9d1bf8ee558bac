"""The ``triton_softmax`` task: ``softmax(x)``, a row-wise fused softmax over ``[M, N]`` written as a Triton kernel.

One program per row loads the row in one block (a power of two >= N, masked), subtracts its max,
exponentiates, sums and stores. The classic kernel bugs hide on ordinary inputs: an unmasked load
reads the next row (right values, out of bounds only on the last row), a row stride taken to be N
is right on contiguous inputs, a block that must divide N is right at N = 64, no max subtraction is
right below logits of 88. Each gets the input that exposes it; on CPU the kernel runs under
Triton's interpreter, inside guard bands (drill/grade/checks/kernels.py).
"""

from __future__ import annotations

from functools import partial

import torch

from drill.grade.checks.compare import against_truth, expect_like, first_nonfinite
from drill.grade.checks.kernels import (ROW_CASES, KernelTask, Rows, bench_rows, closing_checks, guarded, launch, opening_checks,
                                        out_of_bounds, randn, rows_bytes, tensor_out)  # fmt: skip
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.kernel_bench import KernelBench
from drill.text.messages import Ev

FORBIDDEN = {
    "softmax": "softmax (torch.softmax, F.softmax, Tensor.softmax)",  # shown as is: names
    "log_softmax": "log_softmax",
    "_softmax": "torch._softmax",
    "_safe_softmax": "torch._safe_softmax",
    "special_softmax": "torch.special.softmax",
    "exp": Ev("torch.exp (the kernel computes it, not the launcher)"),  # the rule shows it (battery.rules_check)
    "logsumexp": "torch.logsumexp",
}


def reference(x: torch.Tensor) -> torch.Tensor:
    shifted = x - x.amax(-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(-1, keepdim=True)


def truth_of(x: torch.Tensor):
    return reference(x.double()), reference(x)


def call(ctx: Context, x: torch.Tensor) -> torch.Tensor:
    return tensor_out(launch(ctx, x))


@guarded
def large_logits_check(ctx: Context):
    """Logits near ±1e3: exp overflows float32 above ~88 unless the row max is subtracted first."""
    gen = ctx.generator(400)
    for sign in (1, -1):
        x = (sign * 1e3 + ctx.randn(3, 37, gen=gen, dtype=torch.float64)).float()
        out = call(ctx, x)
        truth, same = truth_of(x)
        expect_like(out, truth.shape, x)
        bad = first_nonfinite(out, truth)
        if bad is not None:
            return outcome("fail", Ev("logits ~{logits:g}: non-finite output at {at} (exp overflowed)", logits=sign * 1e3, at=list(bad)),
                           "kernel-no-max-shift")  # fmt: skip
        result = against_truth([(Ev("logits ~{logits:g}", logits=sign * 1e3), out, truth, same)])
        if result.status != "pass":
            return result
    return outcome("pass", Ev("logits ~±1e3: finite and right"))


class TritonSoftmaxTask(KernelTask):
    name = "triton_softmax"
    forbidden = FORBIDDEN
    builtin_what = Ev("softmax (or exp) in the launcher")
    bench = KernelBench("memory", ROW_CASES, bench_rows, lambda x: torch.softmax(x, -1), "torch.softmax", rows_bytes)

    def checks(self, ctx: Context) -> list[CheckDef]:
        rows = Rows(ctx, partial(call, ctx), truth_of, partial(randn, ctx))
        x = randn(ctx, 700, (3, 20))
        return [
            *opening_checks(rows),
            out_of_bounds(rows),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            *closing_checks(rows, lambda: rows.call(x), {"x": x}),
        ]


TASK = TritonSoftmaxTask()
