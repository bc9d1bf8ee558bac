"""The ``triton_matmul`` task: ``matmul(a, b)``, a tiled GEMM ``[M, K] @ [K, N]`` written as a Triton kernel.

One program per ``[BLOCK_M, BLOCK_N]`` output tile loops over K, ``tl.dot`` into a float32 accumulator,
and stores in a's dtype. Its bugs hide on friendly inputs: unmasked edge tiles are right when the
block divides every size, strides taken as contiguous are right until b is a transpose, a float16
accumulator is right until K runs into the thousands, and swapped program ids are right whenever the
tile grid is square. Each gets the input that exposes it; on CPU the kernel runs under Triton's
interpreter, inside guard bands (drill/grade/checks/kernels.py). The interpreter costs ~35 ms a
program, so shapes stay a few tiles wide.
"""

from __future__ import annotations

from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like
from drill.grade.checks.kernels import THREE_SHAPES, KernelTask, Launches, OutOfBounds, guarded, launch, tensor_out
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.kernel_bench import Case, KernelBench
from drill.grade.tolerance import judge
from drill.grade.user.wire import Strided
from drill.text.messages import Ev

FORBIDDEN = {
    "matmul": "torch.matmul / Tensor.matmul",
    "__matmul__": Ev("the @ operator"),  # the rule shows it (battery.rules_check)
    "__rmatmul__": Ev("the @ operator"),  # the rule shows it (battery.rules_check)
    "mm": "torch.mm / Tensor.mm",
    "bmm": "torch.bmm",
    "addmm": "torch.addmm",
    "baddbmm": "torch.baddbmm",
    "einsum": "torch.einsum",
    "tensordot": "torch.tensordot",
    "linear": "F.linear",
    "mv": "torch.mv",
    "chain_matmul": "torch.chain_matmul",
    "multi_dot": "torch.linalg.multi_dot",
}
EDGE_SHAPES = ((1, 1, 1), (17, 127, 33), (129, 17, 17), (1, 129, 127))  # (M, K, N): 1, 17, 127, 129 on every axis
EDGE_AT = 200  # the offset the edge shapes are drawn from, one apiece
DIVISIBLE = (64, 64, 64)
# With blocks up to 128, one of the two tile grids is not square; the tall one is an edge shape (launched once).
(TALL, TALL_AT), (WIDE, WIDE_AT) = (EDGE_SHAPES[2], EDGE_AT + 2), ((32, 16, 160), 1001)
BLOCKS = (16, 32, 64, 128, 256)  # the block sizes a swapped-ids hypothesis tries (tl.dot needs 16 or more)
HALF_SHAPE = (16, 2048, 16)  # 2048 products ~0.25 each: float16 partial sums near 512 round by 0.25 at every K tile


def truth_of(a: torch.Tensor, b: torch.Tensor):
    """The float64 product, and the same-precision one the tolerance scales from: on a GPU, float32 through TF32,
    as tl.dot computes it by default (input_precision="tf32"); the interpreter multiplies in full float32."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if a.is_cuda and a.dtype == torch.float32 else "highest")
    try:
        return a.double() @ b.double(), (a.float() @ b.float()).to(a.dtype)
    finally:
        torch.set_float32_matmul_precision(previous)


def operands(ctx: Context, offset: int, shape, dtype=torch.float32, draw=None):
    m, k, n = shape
    gen = ctx.generator(offset)
    draw = draw or (lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64))
    return draw(m, k).to(ctx.device, dtype), draw(k, n).to(ctx.device, dtype)


def call(ctx: Context, a, b) -> torch.Tensor:
    return tensor_out(launch(ctx, a, b))


def launch_case(ctx: Context, shape, offset: int) -> tuple:
    """(a, b, a @ b as the kernel computes it) for float32 operands of ``shape`` drawn at ``offset``."""
    a, b = operands(ctx, offset, shape)
    return a, b, call(ctx, a, b)


def compare(label: Ev | str, out: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
    problem = expect_like(out, (a.shape[0], b.shape[1]), a)
    return outcome("fail", Ev("{label}: {what}", label=label, what=problem)) if problem else against_truth([(label, out, *truth_of(a, b))])


def swapped_region(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, bm: int, bn: int):
    """Whether ``out`` is what swapped program ids leave with these blocks: the program at (i, j) computes tile (j, i),
    so only the top-left min(gm, gn)² tiles are computed (right) and the rest is never written. The [rows, cols]
    computed, True for a square tile grid that is all right, False when ``out`` is something else."""
    (m, n), (gm, gn) = out.shape, (-(-out.shape[0] // bm), -(-out.shape[1] // bn))
    truth, same = truth_of(a, b)
    right = ((out.double() - truth).abs() <= judge(out, truth, same).allowed) & torch.isfinite(out)
    if gm == gn:
        return bool(right.all())  # a square tile grid: swapped ids compute every tile
    rows, cols = min(m, min(gm, gn) * bm), min(n, min(gm, gn) * bn)
    computed = torch.zeros_like(right)
    computed[:rows, :cols] = True
    return (rows, cols) if right[computed].all() and (~right[~computed]).double().mean() > 0.5 else False


def mkn(shape) -> str:
    """``M, K, N`` of a product as the messages write them: "17, 127, 33"."""
    return ", ".join(map(str, shape))


def right_only_on(regions) -> Ev:
    """"the [m, n] output is right only on [:rows, :cols]" for one (shape, rows, cols) or two."""
    if len(regions) == 1:
        [(shape, rows, cols)] = regions
        return Ev("the {shape} output is right only on [:{rows}, :{cols}]", shape=shape, rows=rows, cols=cols)
    (s1, r1, c1), (s2, r2, c2) = regions
    return Ev("the {s1} output is right only on [:{r1}, :{c1}] and the {s2} output is right only on [:{r2}, :{c2}]",
              s1=s1, r1=r1, c1=c1, s2=s2, r2=r2, c2=c2)  # fmt: skip


def swapped_ids(launches: Launches) -> Ev | None:
    """The message when a tall and a wide product both come out as swapped program ids leave them, for the same blocks."""
    runs = []
    for shape, offset in ((TALL, TALL_AT), (WIDE, WIDE_AT)):
        a, b, out = launches(shape, offset)
        runs.append((out, a, b))
    for bm in BLOCKS:
        for bn in BLOCKS:
            found = [swapped_region(*run, bm, bn) for run in runs]
            regions = [([m, n], *r) for (m, _, n), r in zip((TALL, WIDE), found) if isinstance(r, tuple)]
            if regions and all(found):
                return Ev("{regions}, the rest never written: the program at (i, j) computes tile (j, i) (pid_m and pid_n swapped), "
                          "right only when the tile grid is square", regions=right_only_on(regions))  # fmt: skip
    return None


def shape_check(launches: Launches, shape, offset: int):
    a, b, out = launches(shape, offset)
    problem = expect_like(out, (shape[0], shape[2]), a)
    if problem:
        return outcome("fail", problem)
    return outcome("pass", Ev("output {shape}, {dtype}", shape=list(out.shape), dtype=str(out.dtype)[6:]))


@guarded
def sizes_check(ctx: Context, launches: Launches):
    """Each edge shape; when one fails, swapped program ids (a tall and a wide product say so) or a block that
    must divide the size (right at multiples of 64)."""
    for n, shape in enumerate(EDGE_SHAPES):
        a, b, out = launches(shape, EDGE_AT + n)
        result = compare(Ev("output (M, K, N = {mkn})", mkn=mkn(shape)), out, a, b)
        if result.status == "pass":
            continue
        swapped = swapped_ids(launches)
        if swapped:
            result.message = Ev.seq([result.message, swapped])
            result.codes.append("kernel-pid-wrong-axis")
        elif compare("", call(ctx, *(ab := operands(ctx, 210, DIVISIBLE))), *ab).status == "pass":
            result.message = Ev.seq([result.message, Ev("right at M, K, N = {mkn}: the kernel only works when the block sizes divide the "
                                                         "sizes (the tail tiles are dropped)", mkn=mkn(DIVISIBLE))])  # fmt: skip
            result.codes.append("kernel-block-must-divide")
        return result
    return outcome("pass", Ev("M, K, N = {shapes} all match", shapes="; ".join(map(mkn, EDGE_SHAPES))))


@guarded
def tile_grid_check(launches: Launches):
    """A tall and a wide product: one of them has a tile grid that is not square, whatever the block sizes."""
    for shape, offset in ((TALL, TALL_AT), (WIDE, WIDE_AT)):
        a, b, out = launches(shape, offset)
        result = compare(Ev("output (M, K, N = {mkn})", mkn=mkn(shape)), out, a, b)
        if result.status != "pass":
            swapped = swapped_ids(launches)
            if swapped:
                result.message = Ev.seq([result.message, swapped])
                result.codes.append("kernel-pid-wrong-axis")
            return result
    return outcome("pass", Ev("M x N = {m1} x {n1} and {m2} x {n2}: every tile computed, by the right program",
                              m1=TALL[0], n1=TALL[2], m2=WIDE[0], n2=WIDE[2]))  # fmt: skip


@guarded
def strided_check(ctx: Context, shape, layout_a, layout_b, what: Ev):
    """a and b as views with the given strides (None: contiguous): right, or right only on contiguous copies."""
    a, b = operands(ctx, 2, shape)
    sent = [Strided(t, layout) if layout else t for t, layout in ((a, layout_a), (b, layout_b))]
    label = Ev("output ({what})", what=what)
    try:
        result = compare(label, call(ctx, *sent), a, b)
    except OutOfBounds as exc:
        call(ctx, a, b)  # raises OutOfBounds again when the kernel is out of bounds anyway
        return outcome("fail", Ev("{label}: read outside the views' elements ({finding}): the kernel takes the strides to be those of "
                                  "contiguous tensors", label=label, finding=exc.args[0]), "kernel-contiguous-strides")  # fmt: skip
    if result.status != "pass" and compare("", call(ctx, a, b), a, b).status == "pass":
        result.message = Ev.seq([result.message, Ev("the contiguous copies are right: pass a.stride(0), a.stride(1), b.stride(0), "
                                                     "b.stride(1) to the kernel")])  # fmt: skip
        result.codes.append("kernel-contiguous-strides")
    return result


@guarded
def numerical_check(ctx: Context, shape, offset: int):
    a, b = operands(ctx, offset, shape)
    return compare(Ev("output (M, K, N = {mkn})", mkn=mkn(shape)), call(ctx, a, b), a, b)


@guarded
def half_check(ctx: Context):
    """float16 operands over K = 2048 (values in [0, 1)): right only when the products are summed in float32."""
    gen = ctx.generator(500)
    a, b = operands(ctx, 500, HALF_SHAPE, torch.float16, lambda *s: torch.rand(*s, generator=gen, dtype=torch.float64))
    result = compare(Ev("float16 output (M, K, N = {mkn})", mkn=mkn(HALF_SHAPE)), call(ctx, a, b), a, b)
    if result.status != "pass" and compare("", call(ctx, a.float(), b.float()), a.float(), b.float()).status == "pass":
        result.message = Ev.seq([result.message, Ev("the same operands in float32 are right: the products are summed in float16, "
                                                     "which keeps 11 bits (give tl.dot a float32 accumulator)")])  # fmt: skip
        result.codes.append("kernel-fp16-accumulation")
    return result


@guarded
def out_of_bounds_check(launches: Launches):
    """Edge tiles under the guard: every load and store must stay inside a, b and the output (the edge-size check's
    launches, made again only where it did not run)."""
    for n in (1, 2):
        launches(EDGE_SHAPES[n], EDGE_AT + n)
    return outcome("pass", Ev("M, K, N = {a} and {b}: every load and store stayed inside the tensors",
                              a=mkn(EDGE_SHAPES[1]), b=mkn(EDGE_SHAPES[2])))  # fmt: skip


@guarded
def varying_check(ctx: Context):
    for n, shape in enumerate(((20, 9, 33), (3, 40, 5), (36, 18, 7))):
        a, b = operands(ctx, 600 + n, shape)
        result = compare(Ev("call {n} (M, K, N = {mkn})", n=n + 1, mkn=mkn(shape)), call(ctx, a, b), a, b)
        if result.status != "pass":
            return result
    return outcome("pass", THREE_SHAPES)


def bench_inputs(dims: dict, dtype: torch.dtype, device, gen: torch.Generator) -> tuple:
    """a [M, K] and b [K, N] of one ``--bench`` case, drawn where they are timed."""
    m, k, n = dims["M"], dims["K"], dims["N"]
    return (torch.randn(m, k, generator=gen, device=device, dtype=dtype), torch.randn(k, n, generator=gen, device=device, dtype=dtype))


class TritonMatmulTask(KernelTask):
    name = "triton_matmul"
    forbidden = FORBIDDEN
    builtin_what = Ev("matmul (mm, @, einsum, F.linear) in the launcher")
    bench = KernelBench("compute", tuple(Case({"M": s, "K": s, "N": s}) for s in (1024, 2048, 4096)), bench_inputs,
                        torch.matmul, "torch.matmul", lambda d, e: (d["M"] * d["K"] + d["K"] * d["N"] + d["M"] * d["N"]) * e,
                        lambda d: 2 * d["M"] * d["N"] * d["K"])  # fmt: skip

    def checks(self, ctx: Context) -> list[CheckDef]:
        m, k, n = ctx.sizes(300, (2, 40), (2, 70), (2, 40))
        a, b = operands(ctx, 700, (6, 20, 9))
        launches = Launches(partial(launch_case, ctx))
        return [
            CheckDef("shape.basic", "shape", partial(guarded(shape_check), launches, (5, 7, 3), 1)),
            CheckDef("shape.one-element", "shape", partial(guarded(shape_check), launches, EDGE_SHAPES[0], EDGE_AT)),
            CheckDef("shape.transposed-b", "shape", partial(strided_check, ctx, (20, 19, 21), None, (1, 19),
                                                           Ev("b = b_t.t(), strides (1, K)"))),
            CheckDef("shape.any-strides", "shape", partial(strided_check, ctx, (18, 23, 20), (26, 1), (2, 47),
                                                          Ev("a strides (K + 3, 1), b strides (2, 2K + 1)"))),
            CheckDef("numerical.edge-sizes", "numerical", partial(sizes_check, ctx, launches)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, (m, k, n), 301)),
            CheckDef("numerical.tile-grid", "numerical", partial(tile_grid_check, launches)),
            CheckDef("stability.float16-long-k", "stability", partial(half_check, ctx)),
            CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, launches)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(guarded(no_mutation_check), ctx, lambda: call(ctx, a, b), {"a": a, "b": b})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, ctx)),
        ]


TASK = TritonMatmulTask()
