"""The FlashAttention-style tolerance rule.

An implementation may be as wrong as the grader's own reference run in the same precision,
times two, plus a rounding floor; an absolute backstop per dtype keeps the rule sane when
the same-precision reference happens to be almost exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from drill.text.messages import Ev

BACKSTOP = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2}


@dataclass(frozen=True)
class Verdict:
    ok: bool
    error: float  # max |user - truth|
    allowed: float
    where: tuple[int, ...]  # index of the largest error, or of the first non-finite value
    nonfinite: str = ""  # "NaN", "inf" or "-inf" where the truth is finite; "" when every value is finite there
    count: int = 0  # how many such values

    def describe(self, what: str | None = None) -> Ev:
        at, what = list(self.where), what if what is not None else Ev("output")
        if self.nonfinite and self.count > 1:
            return Ev("{what}: {value} at {at} where the reference is finite ({count} values non-finite where the reference is finite)",
                      what=what, value=self.nonfinite, at=at, count=self.count)  # fmt: skip
        if self.nonfinite:
            return Ev("{what}: {value} at {at} where the reference is finite", what=what, value=self.nonfinite, at=at)
        return Ev("{what}: max error {e:.3g} at {at} (allowed {a:.3g})", what=what, e=self.error, at=at, a=self.allowed)


def judge(user: torch.Tensor, truth: torch.Tensor, same_precision: torch.Tensor) -> Verdict:
    """Compare ``user`` to the float64 ``truth``, allowing 2x the error of ``same_precision``.

    NaN where the truth is finite counts as an infinite error.
    """
    dtype = same_precision.dtype
    truth = truth.double()
    user = user.detach().double()
    bad = ~torch.isfinite(user) & torch.isfinite(truth)
    diff = (user - truth).abs()
    diff = torch.nan_to_num(diff, nan=0.0, posinf=float("inf"))  # NaN: both NaN, or equal infinities
    finite = torch.isfinite(truth)  # the allowance is measured where the truth is a number

    def largest(t):
        t = torch.where(finite, t.double(), torch.zeros((), dtype=torch.float64, device=t.device))
        return t.abs().nan_to_num(nan=0.0, posinf=0.0).max().item() if t.numel() else 0.0

    baseline = largest(same_precision.detach().double() - truth)
    rounded = truth.to(dtype)
    floor = largest(rounded + 0.3 - 0.3 - rounded)
    magnitude = max(1.0, largest(truth))
    allowed = max(2 * baseline + floor, BACKSTOP.get(dtype, 1e-5) * magnitude)
    if diff.numel() == 0:
        return Verdict(True, 0.0, allowed, ())
    if bad.any():
        first = tuple(int(i) for i in bad.nonzero()[0])
        value = user[first].item()
        return Verdict(False, float("inf"), allowed, first, "NaN" if value != value else ("inf" if value > 0 else "-inf"),
                       int(bad.sum()))  # fmt: skip
    flat = int(diff.argmax())
    error = diff.reshape(-1)[flat].item()
    where = []
    for size in reversed(diff.shape):  # not torch.unravel_index: it imports sympy (seconds)
        flat, index = divmod(flat, size)
        where.insert(0, index)
    where = tuple(where)
    return Verdict(error <= allowed, error, allowed, where)


PROPERTY_FACTOR = 4  # a property (a norm kept, a dot product shift-invariant) drifts through more ops than one output


def property_allowed(reference_drift: float, dtype: torch.dtype, magnitude: float = 1.0) -> float:
    """How far the user's code may break a property that holds exactly in real arithmetic, given how far
    the grader's own same-precision reference breaks it on the same inputs: a factor, a rounding floor
    of a few ulps, and the dtype's backstop; never more precision than ``dtype`` carries."""
    floor = 4 * torch.finfo(dtype).eps * magnitude
    return max(PROPERTY_FACTOR * reference_drift + floor, BACKSTOP.get(dtype, 1e-5) * magnitude)
