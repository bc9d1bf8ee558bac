"""What the Triton kernel tasks share: a launch whose out-of-bounds access is a finding, row-strided inputs,
and the checks every kernel gets (edge sizes, strides, a block size that must divide, out of bounds).

The user side guards every interpreted launch (drill/grade/user/kernel_guard.py): an access outside
the tensors a kernel was given raises ``KernelOutOfBounds`` there, which arrives here as the
message of a UserCodeError and becomes :class:`OutOfBounds`.
"""

from __future__ import annotations

import torch

from drill.grade.checks.compare import against_truth, expect_like, unpack
from drill.grade.context import Context, outcome
from drill.grade.remote import UserCodeError
from drill.grade.user.wire import RowStrided

MARK = "raised KernelOutOfBounds: "


class OutOfBounds(Exception):
    """The kernel read or wrote outside its tensors (lanes dropped before they touched memory)."""


def launch(ctx: Context, *args, fn=None, **kwargs):
    """The user's launcher (``fn``, default the task's entry) on the user side; an out-of-bounds access raises
    OutOfBounds with the guard's words."""
    try:
        return ctx.call(fn or ctx.entry, *args, **kwargs)
    except UserCodeError as exc:
        text = str(exc)
        if MARK in text:
            raise OutOfBounds(text.split(MARK, 1)[1].split(" (at ")[0]) from None
        raise


def guarded(check):
    """A check whose out-of-bounds access fails it with ``kernel-mask-missing``."""

    def run(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except OutOfBounds as exc:
            return outcome("fail", f"out-of-bounds access: {exc}", "kernel-mask-missing")

    return run


PAD = 5  # a row-strided input's rows lie N + 5 elements apart, the gaps NaN (built on the user side: the wire sends bytes)


def tensor_out(ret) -> torch.Tensor:
    return unpack(ret)[0]


@guarded
def strided_check(ctx: Context, call, truth_of, x: torch.Tensor, label: str):
    """A row-strided view of x: right, or the kernel assumed contiguous rows (and it is right on x's contiguous copy)."""
    stride = x.shape[1] + PAD
    try:
        out = call(RowStrided(x, PAD))
    except OutOfBounds as exc:
        call(x.contiguous())  # raises OutOfBounds again when the kernel is out of bounds anyway
        return outcome("fail", f"{label}: a row-strided view (row stride {stride}) is read outside its rows "
                               f"({exc}): the kernel takes the row stride to be the row length", "kernel-contiguous-strides")  # fmt: skip
    truth, same = truth_of(x)
    result = against_truth([(f"{label} (row-strided input, stride {stride})", out, truth, same)])
    if result.status != "pass":
        contiguous = call(x.contiguous())
        if against_truth([("contiguous copy", contiguous, truth, same)]).status == "pass":
            result.message += "; its contiguous copy is right: the kernel assumes the row stride is the row length (use x.stride(0))"
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
        result = against_truth([(f"output (shape {list(shape)})", out, truth, same)])
        if result.status != "pass":
            x2 = like(divisible)
            truth2, same2 = truth_of(x2)
            if against_truth([("", call(x2), truth2, same2)]).status == "pass":
                result.message += (f"; right at shape {list(divisible)}: the kernel only works when the block size divides "
                                   "the size (the tail block is dropped)")  # fmt: skip
                result.codes.append("kernel-block-must-divide")
            return result
    return outcome("pass", f"shapes {', '.join(str(list(s)) for s in shapes)} all match")
