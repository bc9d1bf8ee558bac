"""Shared judgements on the user's outputs: shape, finiteness, the tolerance rule, leaks."""

from __future__ import annotations

import re

import torch

from drill.grade.context import WrongShape, outcome
from drill.grade.report import Check
from drill.grade.tolerance import judge
from drill.grade.user.wire import Handle
from drill.text.messages import Ev


def unpack(ret):
    """(output, weights or None) from whatever the user's code returned."""
    if isinstance(ret, (tuple, list)):
        if not ret:
            raise WrongShape(Ev("returned an empty tuple"))
        out = ret[0]
        weights = ret[1] if len(ret) > 1 and isinstance(ret[1], torch.Tensor) else None
    else:
        out, weights = ret, None
    if not isinstance(out, torch.Tensor):
        raise not_a_tensor(out)
    return out, weights


def not_a_tensor(value) -> WrongShape:
    if isinstance(value, Handle):  # not plain data, kept on the user side
        return WrongShape(Ev("returned an object of its own, not a tensor"))
    return WrongShape(Ev("returned {type}, not a tensor", type=type(value).__name__))


OUTPUT = Ev("output")


def expect_shape(tensor: torch.Tensor, shape, what: str = OUTPUT) -> None:
    if not isinstance(tensor, torch.Tensor):  # a list where a tensor belongs: a contract failure, not drill's
        raise not_a_tensor(tensor)
    if tuple(tensor.shape) != tuple(shape):
        raise WrongShape(Ev("{what} has shape {shape}, expected {expected}", what=what, shape=list(tensor.shape), expected=list(shape)))


def expect_like(out: torch.Tensor, shape, like: torch.Tensor, what: str = OUTPUT) -> Ev | None:
    """Shape must match (raises WrongShape); a dtype/device difference is returned as a message."""
    expect_shape(out, shape, what)
    if out.dtype != like.dtype:
        return Ev("{what} dtype is {dtype}, the input's is {expected}", what=what, dtype=str(out.dtype), expected=str(like.dtype))
    if out.device != like.device:
        return Ev("{what} is on {device}, the input is on {expected}", what=what, device=str(out.device), expected=str(like.device))
    return None


def against_truth(pairs) -> Check:
    """Judge (label, user, truth, same_precision[, float32 reference or None]) tuples; the worst failure, else a summary.

    A float64 check may carry a fifth item, the reference computed in float32 by the same ops: code that
    chose float32 for part of its work (Hugging Face upcasts the router's softmax to float32) is then
    judged by the same rule at float32, the precision it chose, and passes with a note saying so."""
    worst, chosen = None, []
    for label, user, truth, same, *narrow in pairs:
        expect_shape(user, truth.shape, label)
        verdict = judge(user, truth, same)
        if not verdict.ok and narrow and narrow[0] is not None and not verdict.nonfinite and user.dtype == same.dtype:
            at_float32 = judge(user, truth, narrow[0])
            if at_float32.ok:
                verdict = at_float32
                chosen.append(label)
        if not verdict.ok:
            return outcome("fail", verdict.describe(label))
        if worst is None or verdict.error / verdict.allowed > worst.error / worst.allowed:
            worst = verdict
    summary = Ev("max error {e:.2g} (allowed {a:.2g})", e=worst.error, a=worst.allowed)
    if chosen:
        names = Ev.seq([_head(label) for label in chosen], ", ")
        summary = Ev("{summary}; {note} ({names})", summary=summary, note=FLOAT32_NOTE, names=names)
    return outcome("pass", summary)


def _head(label) -> Ev:
    """A label without its parenthesised details: ``loss (beta=0.1, float64)`` -> ``loss``; a bare name is code."""
    if isinstance(label, Ev):
        head = re.match(r"\{(\w+)\} \(", label.msgid)
        label = label.params[head.group(1)] if head else label
    return label if isinstance(label, Ev) else Ev("{code}", code=label.split(" (")[0])


FLOAT32_NOTE = Ev("computed in float32 within a float64 check: judged at float32, the precision the code chose")


def same_output(a: torch.Tensor, b: torch.Tensor, tol: float) -> bool:
    """Two outputs of the user's own code (a transposed input and its contiguous copy) agree, NaN where both
    have it included: a NaN that a mask bug puts in both is that bug's evidence, not a layout failure."""
    return a.shape == b.shape and torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=True)


def distinct(a: float, b: float, least: int = 6, zeros: bool = True) -> tuple[str, str]:
    """Two different numbers printed to the same number of significant digits (``least`` at least, trailing zeros
    kept when ``zeros``), enough that they read differently: a message never shows "-1.33451 vs -1.33451"."""
    keep = "#" if zeros else ""
    for digits in range(least, 18):
        x, y = f"{a:{keep}.{digits}g}", f"{b:{keep}.{digits}g}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def shown(value: float, other: float) -> str:
    """``value`` alone, with the fewest significant digits (4 at least) that do not print it as ``other``."""
    return distinct(value, other, least=4, zeros=False)[0]


def first_nonfinite(user: torch.Tensor, truth: torch.Tensor) -> tuple[int, ...] | None:
    bad = ~torch.isfinite(user.detach()) & torch.isfinite(truth)
    if not bad.any():
        return None
    return tuple(int(i) for i in bad.nonzero()[0])


def moved(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-position change, leading dims kept: |a - b| max over the feature axis."""
    return (a.detach() - b.detach()).abs().nan_to_num(nan=float("inf")).amax(dim=-1)


LEAK_THRESHOLD = 1e-9  # float64 inputs: a masked position moves an output by exactly 0, or by ~1
