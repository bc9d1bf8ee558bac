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

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.kernels import guarded, launch, sizes_check, strided_check, tensor_out
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.user.wire import RowStrided

FORBIDDEN = {
    "rms_norm": "F.rms_norm / nn.RMSNorm",
    "_fused_rms_norm": "torch._fused_rms_norm",
    "rsqrt": "torch.rsqrt (the kernel computes it, not the launcher)",
    "sqrt": "torch.sqrt",
    "norm": "torch.norm / torch.linalg.norm",
    "pow": "torch.pow / Tensor.pow",
    "mean": "torch.mean",
}
EPS = 1e-6
EDGE_SHAPES = ((1, 1), (3, 17), (2, 129), (4, 127))  # N not a multiple of any block; 129 crosses 128
DIVISIBLE = (3, 64)
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


def randn(ctx: Context, offset: int, shape, dtype=torch.float32, scale: float = 1.0):
    return (scale * ctx.randn(*shape, gen=ctx.generator(offset), dtype=torch.float64)).to(dtype)


def shape_check(ctx: Context, shape):
    x = randn(ctx, 1, shape)
    out = call(ctx, x)
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", f"output {list(out.shape)}, {str(out.dtype)[6:]}")


@guarded
def numerical_check(ctx: Context, shape, offset: int):
    x = randn(ctx, offset, shape)
    return against_truth([(f"output (shape {list(shape)})", call(ctx, x), *truth_of(ctx, x))])


@guarded
def half_check(ctx: Context):
    """float16 rows whose sum of squares passes 65504: right only when the kernel accumulates in float32."""
    x = randn(ctx, 500, HALF_SHAPE, torch.float16, HALF_SCALE)
    out = call(ctx, x)
    problem = expect_like(out, HALF_SHAPE, x)
    if problem:
        return outcome("fail", problem)
    result = against_truth([(f"float16 output (shape {list(HALF_SHAPE)}, values ~{HALF_SCALE:g})", out, *truth_of(ctx, x))])
    if result.status != "pass" and against_truth([("", call(ctx, x.float()), *truth_of(ctx, x.float()))]).status == "pass":
        result.message += ("; the same rows in float32 are right: the sum of squares is accumulated in float16, "
                           "whose largest value is 65504")  # fmt: skip
        result.codes.append("kernel-fp16-accumulation")
    return result


@guarded
def out_of_bounds_check(ctx: Context):
    """Edge tiles under the guard: every load and store must stay inside x, the weight and the output."""
    for shape in ((3, 17), (2, 129)):
        call(ctx, randn(ctx, 50, shape))
    return outcome("pass", "shapes [3, 17] and [2, 129]: every load and store stayed inside the tensors")


@guarded
def varying_check(ctx: Context):
    for n, shape in enumerate(((4, 33), (2, 7), (3, 100))):
        x = randn(ctx, 600 + n, shape)
        result = against_truth([(f"call {n + 1} (shape {list(shape)})", call(ctx, x), *truth_of(ctx, x))])
        if result.status != "pass":
            return result
    return outcome("pass", "three calls with different shapes in a row all match")


class TritonRmsNormTask:
    name = "triton_rmsnorm"
    forbidden = FORBIDDEN
    builtin_what = "RMSNorm (or rsqrt, sqrt, pow, mean) in the launcher"
    builtin_code = "kernel-uses-torch-op"

    def checks(self, ctx: Context) -> list[CheckDef]:
        run = partial(call, ctx)
        truth = partial(truth_of, ctx)
        like = partial(randn, ctx, 200)
        drawn = ctx.sizes(300, (2, 6), (10, 200))
        x = randn(ctx, 700, (3, 20))
        w = weight_for(ctx, 20)
        return [
            CheckDef("shape.basic", "shape", partial(guarded(shape_check), ctx, (3, 7))),
            CheckDef("shape.one-element", "shape", partial(guarded(shape_check), ctx, (1, 1))),
            CheckDef("shape.row-strided", "shape", partial(strided_check, ctx, run, truth, randn(ctx, 2, (4, 19)), "output")),
            CheckDef("numerical.edge-sizes", "numerical", partial(guarded(sizes_check), ctx, run, truth, EDGE_SHAPES, DIVISIBLE, like)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, drawn, 301)),
            CheckDef("stability.float16-sum", "stability", partial(half_check, ctx)),
            CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(guarded(no_mutation_check), ctx, lambda: launch(ctx, x, w), {"x": x, "weight": w})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list:
        return []

    def hypotheses(self, ctx: Context):
        return ()


TASK = TritonRmsNormTask()
