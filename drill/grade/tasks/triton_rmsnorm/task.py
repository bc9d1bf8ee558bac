"""The ``triton_rmsnorm`` task: ``rms_norm(x, weight, eps=1e-6)``, a fused RMSNorm forward over ``[M, N]`` in Triton.

One program per row loads the row in one block (masked), sums its squares in float32, scales by
``rsqrt(mean + eps)`` and the weight, and stores in x's dtype. The kernel bugs of softmax recur
(the mask, the row stride, a block that must divide N), and one more shows only in half precision:
squares summed in float16 pass 65504 (a row of values around 8 and N = 2048 does), so the sum is
inf and the row comes out 0. Each gets the input that exposes it; on CPU the kernel runs under
Triton's interpreter, inside guard bands (drill/grade/checks/kernels.py).
"""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.kernels import (ROW_CASES, KernelTask, Rows, closing_checks, guarded, launch, opening_checks, out_of_bounds,
                                        randn, tensor_out)  # fmt: skip
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.kernel_bench import KernelBench
from drill.grade.user.wire import RowStrided
from drill.text.messages import Ev

FORBIDDEN = {
    "rms_norm": "F.rms_norm / nn.RMSNorm",
    "_fused_rms_norm": "torch._fused_rms_norm",
    "rsqrt": Ev("torch.rsqrt (the kernel computes it, not the launcher)"),  # the rule shows it (battery.rules_check)
    "sqrt": "torch.sqrt",
    "norm": "torch.norm / torch.linalg.norm",
    "pow": "torch.pow / Tensor.pow",
    "mean": "torch.mean",
}
EPS = 1e-6
HALF_SHAPE, HALF_SCALE = (3, 2048), 8.0  # sum of squares ~ 2048 * 64 = 131072: past float16's 65504


def reference(x: torch.Tensor, weight: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def weight_for(ctx: Context, n: int, dtype=torch.float32) -> torch.Tensor:
    return 1 + 0.5 * ctx.randn(n, gen=ctx.generator(900 + n), dtype=dtype)  # drawn per N: a weight never read shows


def truth_of(ctx: Context, x: torch.Tensor):
    w = weight_for(ctx, x.shape[1], x.dtype)
    return reference(x.double(), w.double()), reference(x.float(), w.float()).to(x.dtype)


def call(ctx: Context, x) -> torch.Tensor:
    """The launcher on x (a tensor, or a RowStrided recipe of one) and the weight drawn for its N."""
    t = x.tensor if isinstance(x, RowStrided) else x
    return tensor_out(launch(ctx, x, weight_for(ctx, t.shape[1], t.dtype)))


@guarded
def half_check(ctx: Context):
    """float16 rows whose sum of squares passes 65504: right only when the kernel accumulates in float32."""
    x = randn(ctx, 500, HALF_SHAPE, torch.float16, HALF_SCALE)
    out = call(ctx, x)
    problem = expect_like(out, HALF_SHAPE, x)
    if problem:
        return outcome("fail", problem)
    label = Ev("float16 output (shape {shape}, values ~{scale:g})", shape=list(HALF_SHAPE), scale=HALF_SCALE)
    result = against_truth([(label, out, *truth_of(ctx, x))])
    if result.status != "pass" and against_truth([("", call(ctx, x.float()), *truth_of(ctx, x.float()))]).status == "pass":
        result.message = Ev.seq([result.message, Ev("the same rows in float32 are right: the sum of squares is accumulated in float16, "
                                                     "whose largest value is 65504")])  # fmt: skip
        result.codes.append("kernel-fp16-accumulation")
    return result


def bench_inputs(dims: dict, dtype: torch.dtype, device, gen: torch.Generator) -> tuple:
    x = torch.randn(dims["M"], dims["N"], generator=gen, device=device, dtype=dtype)
    return x, 1 + 0.5 * torch.randn(dims["N"], generator=gen, device=device, dtype=dtype)


def bench_op(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return F.rms_norm(x, (x.shape[-1],), weight, EPS)


class TritonRmsNormTask(KernelTask):
    name = "triton_rmsnorm"
    forbidden = FORBIDDEN
    builtin_what = Ev("RMSNorm (or rsqrt, sqrt, pow, mean) in the launcher")
    bench = KernelBench("memory", ROW_CASES, bench_inputs, bench_op, "F.rms_norm", lambda d, e: (2 * d["M"] + 1) * d["N"] * e)

    def checks(self, ctx: Context) -> list[CheckDef]:
        rows = Rows(ctx, partial(call, ctx), partial(truth_of, ctx), partial(randn, ctx))
        x = randn(ctx, 700, (3, 20))
        w = weight_for(ctx, 20)
        return [
            *opening_checks(rows),
            CheckDef("stability.float16-sum", "stability", partial(half_check, ctx)),
            out_of_bounds(rows),
            *closing_checks(rows, lambda: launch(ctx, x, w), {"x": x, "weight": w}),
        ]


TASK = TritonRmsNormTask()
