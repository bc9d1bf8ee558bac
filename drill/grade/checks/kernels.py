"""What the Triton kernel tasks share: a launch whose out-of-bounds access is a finding, row-strided inputs,
and the checks every kernel gets (edge sizes, strides, a block size that must divide, out of bounds). A task
whose launcher maps ``[M, N]`` rows describes it once as :class:`Rows` and takes the checks every row kernel
gets from :func:`opening_checks`, :func:`out_of_bounds` and :func:`closing_checks`, in its own order.

The user side guards every interpreted launch (drill/grade/user/kernel_guard.py): an access outside
the tensors a kernel was given raises ``KernelOutOfBounds`` there, which arrives here as the
message of a UserCodeError and becomes :class:`OutOfBounds`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import OUTPUT, against_truth, expect_like, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.kernel_bench import Case
from drill.grade.remote import UserCodeError
from drill.grade.user.wire import RowStrided
from drill.text.messages import Ev

class OutOfBounds(Exception):
    """The kernel read or wrote outside its tensors (lanes dropped before they touched memory)."""


class Launches:
    """One grade's launches of fixed cases, each made once (the interpreter takes tens of ms a program): checks that
    want the same case share what ``make(*key)`` returned (the inputs it drew and the kernel's result), or re-raise
    the finding (one of ``findings``: an out-of-bounds access, a wrong shape) that it raised."""

    def __init__(self, make: Callable[..., tuple], findings: tuple[type[Exception], ...] = ()):
        self.make, self.findings, self.done = make, (OutOfBounds, *findings), {}
        self.signature = inspect.signature(make)

    def __call__(self, *args):
        bound = self.signature.bind(*args)
        bound.apply_defaults()  # a default passed or left out is the same launch
        key = tuple(bound.arguments.values())
        if key not in self.done:
            try:
                self.done[key] = self.make(*key)
            except self.findings as exc:
                self.done[key] = exc
        found = self.done[key]
        if isinstance(found, Exception):
            raise found
        return found


def launch(ctx: Context, *args, fn=None, **kwargs):
    """The user's launcher (``fn``, default the task's entry) on the user side; an out-of-bounds access raises
    OutOfBounds with the guard's finding."""
    try:
        return ctx.call(fn or ctx.entry, *args, **kwargs)
    except UserCodeError as exc:
        finding = guard_finding(exc.args[0])
        if finding is not None:
            raise OutOfBounds(finding) from None
        raise


def guard_finding(message) -> Ev | None:
    """The finding of the guard (drill/grade/user/kernel_guard.py) in the user side's message, which arrives as data:
    ``raised KernelOutOfBounds: <which program, what access, where> (at <the user's lines>)``; None for any other."""
    if isinstance(message, Ev) and message.msgid == "{what} (at {where})":
        message = message.params["what"]
    if isinstance(message, Ev) and message.msgid == "raised {type}: {text}" and message.params["type"] == "KernelOutOfBounds":
        text = message.params["text"]
        return text if isinstance(text, Ev) else Ev("{name}", name=text)
    return None


def guarded(check):
    """A check whose out-of-bounds access fails it with ``kernel-mask-missing``."""

    def run(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except OutOfBounds as exc:
            return outcome("fail", Ev("out-of-bounds access: {what}", what=exc.args[0]), "kernel-mask-missing")

    return run


PAD = 5  # a row-strided input's rows lie N + 5 elements apart, the gaps NaN (built on the user side: the wire sends bytes)


def tensor_out(ret) -> torch.Tensor:
    return unpack(ret)[0]


@guarded
def strided_check(ctx: Context, call, truth_of, x: torch.Tensor, label: Ev):
    """A row-strided view of x: right, or the kernel assumed contiguous rows (and it is right on x's contiguous copy)."""
    stride = x.shape[1] + PAD
    try:
        out = call(RowStrided(x, PAD))
    except OutOfBounds as exc:
        call(x.contiguous())  # raises OutOfBounds again when the kernel is out of bounds anyway
        return outcome("fail", Ev("{label}: a row-strided view (row stride {stride}) is read outside its rows ({finding}): the kernel "
                                  "takes the row stride to be the row length", label=label, stride=stride, finding=exc.args[0]),
                       "kernel-contiguous-strides")  # fmt: skip
    truth, same = truth_of(x)
    result = against_truth([(Ev("{label} (row-strided input, stride {stride})", label=label, stride=stride), out, truth, same)])
    if result.status != "pass":
        contiguous = call(x.contiguous())
        if against_truth([(Ev("contiguous copy"), contiguous, truth, same)]).status == "pass":
            result.message = Ev.seq([result.message, Ev("its contiguous copy is right: the kernel assumes the row stride is the row length "
                                                         "(use x.stride(0))")])  # fmt: skip
            result.codes.append("kernel-contiguous-strides")
    return result


def sizes_check(ctx: Context, call, truth_of, shapes, divisible, like):
    """Each shape (edge sizes) against the truth; when one fails but a shape of multiples of 64 passes, the kernel
    needs a block size that divides the size."""
    for shape in shapes:
        x = like(shape)
        out = call(x)
        problem = expect_like(out, truth_of(x)[0].shape, x)
        if problem:
            return outcome("fail", problem)
        truth, same = truth_of(x)
        result = against_truth([(Ev("output (shape {shape})", shape=list(shape)), out, truth, same)])
        if result.status != "pass":
            x2 = like(divisible)
            truth2, same2 = truth_of(x2)
            if against_truth([("", call(x2), truth2, same2)]).status == "pass":
                result.message = Ev.seq([result.message, Ev("right at shape {shape}: the kernel only works when the block size divides "
                                                             "the size (the tail block is dropped)", shape=list(divisible))])  # fmt: skip
                result.codes.append("kernel-block-must-divide")
            return result
    return outcome("pass", Ev("shapes {shapes} all match", shapes=", ".join(str(list(s)) for s in shapes)))


EDGE_SHAPES = ((1, 1), (3, 17), (2, 129), (4, 127))  # N not a multiple of any block; 129 crosses 128
DIVISIBLE = (3, 64)


def randn(ctx: Context, offset: int, shape, dtype=torch.float32, scale: float = 1.0) -> torch.Tensor:
    """Standard normal values (times ``scale``) drawn in float64 from the grade's seed and ``offset``, then cast."""
    return (scale * ctx.randn(*shape, gen=ctx.generator(offset), dtype=torch.float64)).to(dtype)


@dataclass(frozen=True)
class Rows:
    """A task's launcher over ``[M, N]`` rows, as the shared checks call it."""

    ctx: Context
    call: Callable  # x (a tensor or a RowStrided recipe of one) -> the output tensor
    truth_of: Callable  # x -> (float64 truth, the reference in x's precision)
    draw: Callable  # (offset, shape) -> x


def shape_check(rows: Rows, shape):
    x = rows.draw(1, shape)
    out = rows.call(x)
    problem = expect_like(out, shape, x)
    if problem:
        return outcome("fail", problem)
    return outcome("pass", Ev("output {shape}, {dtype}", shape=list(out.shape), dtype=str(out.dtype)[6:]))


@guarded
def numerical_check(rows: Rows, shape, offset: int):
    x = rows.draw(offset, shape)
    return against_truth([(Ev("output (shape {shape})", shape=list(shape)), rows.call(x), *rows.truth_of(x))])


@guarded
def out_of_bounds_check(rows: Rows, launch_all):
    """Edge tiles under the guard: every load and store of every launcher must stay inside its tensors."""
    for shape in ((3, 17), (2, 129)):
        launch_all(rows.draw(50, shape))
    return outcome("pass", Ev("shapes [3, 17] and [2, 129]: every load and store stayed inside the tensors"))


@guarded
def varying_check(rows: Rows):
    for n, shape in enumerate(((4, 33), (2, 7), (3, 100))):
        x = rows.draw(600 + n, shape)
        result = against_truth([(Ev("call {n} (shape {shape})", n=n + 1, shape=list(shape)), rows.call(x), *rows.truth_of(x))])
        if result.status != "pass":
            return result
    return outcome("pass", THREE_SHAPES)


THREE_SHAPES = Ev("three calls with different shapes in a row all match")


def opening_checks(rows: Rows) -> list[CheckDef]:
    """Shapes (basic, one element, row-strided), then values (edge sizes, sizes drawn from the seed)."""
    ctx = rows.ctx
    return [
        CheckDef("shape.basic", "shape", partial(guarded(shape_check), rows, (3, 7))),
        CheckDef("shape.one-element", "shape", partial(guarded(shape_check), rows, (1, 1))),
        CheckDef("shape.row-strided", "shape", partial(strided_check, ctx, rows.call, rows.truth_of, rows.draw(2, (4, 19)), OUTPUT)),
        CheckDef("numerical.edge-sizes", "numerical",
                 partial(guarded(sizes_check), ctx, rows.call, rows.truth_of, EDGE_SHAPES, DIVISIBLE, partial(rows.draw, 200))),
        CheckDef("numerical.drawn", "numerical", partial(numerical_check, rows, ctx.sizes(300, (2, 6), (10, 200)), 301)),
    ]  # fmt: skip


def out_of_bounds(rows: Rows, launch_all=None) -> CheckDef:
    """``mask-leak.out-of-bounds`` on edge tiles; ``launch_all`` runs every launcher of the task on x (default: call)."""
    return CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, rows, launch_all or rows.call))


def closing_checks(rows: Rows, mutation: Callable, inputs: dict) -> list[CheckDef]:
    """No input changed by ``mutation()`` (a call on ``inputs``), then three shapes in a row."""
    return [
        CheckDef("robustness.no-mutation", "robustness", partial(guarded(no_mutation_check), rows.ctx, mutation, inputs)),
        CheckDef("robustness.varying-shape", "robustness", partial(varying_check, rows)),
    ]


class KernelTask:
    """What every kernel task object shares: the refusal's code, and no probes or hypotheses (the checks name the bugs)."""

    builtin_code = "kernel-uses-torch-op"

    def probes(self, ctx: Context) -> list:
        return []

    def hypotheses(self, ctx: Context):
        return ()


ROW_CASES = (*(Case({"M": 4096, "N": n}) for n in (1024, 4096, 8192)), Case({"M": 4096, "N": 4096}, "float32"))


def bench_rows(dims: dict, dtype: torch.dtype, device, gen: torch.Generator) -> tuple:
    """The ``[M, N]`` input of one ``--bench`` case, drawn where it is timed."""
    return (torch.randn(dims["M"], dims["N"], generator=gen, device=device, dtype=dtype),)


def rows_bytes(dims: dict, esize: int) -> int:
    """x read once, an output like it written once."""
    return 2 * dims["M"] * dims["N"] * esize
