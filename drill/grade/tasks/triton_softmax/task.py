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

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, first_nonfinite
from drill.grade.checks.kernels import guarded, launch, sizes_check, strided_check, tensor_out
from drill.grade.context import CheckDef, Context, outcome

FORBIDDEN = {
    "softmax": "softmax (torch.softmax, F.softmax, Tensor.softmax)",
    "log_softmax": "log_softmax",
    "_softmax": "torch._softmax",
    "_safe_softmax": "torch._safe_softmax",
    "special_softmax": "torch.special.softmax",
    "exp": "torch.exp (the kernel computes it, not the launcher)",
    "logsumexp": "torch.logsumexp",
}
EDGE_SHAPES = ((1, 1), (3, 17), (2, 129), (4, 127))  # N not a multiple of any block; 129 crosses 128
DIVISIBLE = (3, 64)


def reference(x: torch.Tensor) -> torch.Tensor:
    shifted = x - x.amax(-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(-1, keepdim=True)


def truth_of(x: torch.Tensor):
    return reference(x.double()), reference(x)


def call(ctx: Context, x: torch.Tensor) -> torch.Tensor:
    return tensor_out(launch(ctx, x))


def randn(ctx: Context, offset: int, shape, dtype=torch.float32):
    return ctx.randn(*shape, gen=ctx.generator(offset), dtype=dtype)


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
def out_of_bounds_check(ctx: Context):
    """Edge tiles under the guard: every load and store must stay inside x and the output."""
    for shape in ((3, 17), (2, 129)):
        call(ctx, randn(ctx, 50, shape))
    return outcome("pass", "shapes [3, 17] and [2, 129]: every load and store stayed inside the tensors")


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
            return outcome("fail", f"logits ~{sign * 1e3:g}: non-finite output at {list(bad)} (exp overflowed)", "kernel-no-max-shift")
        result = against_truth([(f"logits ~{sign * 1e3:g}", out, truth, same)])
        if result.status != "pass":
            return result
    return outcome("pass", "logits ~±1e3: finite and right")


@guarded
def varying_check(ctx: Context):
    for n, shape in enumerate(((4, 33), (2, 7), (3, 100))):
        x = randn(ctx, 600 + n, shape)
        result = against_truth([(f"call {n + 1} (shape {list(shape)})", call(ctx, x), *truth_of(x))])
        if result.status != "pass":
            return result
    return outcome("pass", "three calls with different shapes in a row all match")


class TritonSoftmaxTask:
    name = "triton_softmax"
    forbidden = FORBIDDEN
    builtin_what = "softmax (or exp) in the launcher"
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
            CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(guarded(no_mutation_check), ctx, lambda: run(x), {"x": x})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list:
        return []

    def hypotheses(self, ctx: Context):
        return ()


TASK = TritonSoftmaxTask()
