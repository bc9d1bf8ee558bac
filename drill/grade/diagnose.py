"""Name the likely mistake: test single-bug hypotheses against the user's own outputs.

A hypothesis (a reference Variant) explains the user's code when the user's output equals
the variant's on every probe, and the variant differs from the correct reference on at
least one: so a bug that only shows with masks is not "confirmed" by unmasked probes alone.
"""

from __future__ import annotations

import torch

from drill.diagnosis_codes import explain
from drill.grade.context import Context
from drill.grade.remote import UserCodeError
from drill.grade.reference import CORRECT
from drill.grade.report import FAILING, Check, Diagnosis

MATCH = 1e-6  # float64 probes: a matching variant agrees to rounding
DIFFER = 1e-3


def _agrees(user, expected) -> bool:
    if user is None or user.shape != expected.shape:
        return False
    finite = torch.isfinite(expected)
    if not torch.isfinite(user[finite]).all():
        return False
    scale = max(1.0, expected[finite].abs().max().item()) if finite.any() else 1.0
    return bool(((user.detach().double() - expected).abs()[finite] <= MATCH * scale).all())


def _differs(expected, correct) -> bool:
    both = torch.isfinite(expected) & torch.isfinite(correct)
    return bool(((expected - correct).abs()[both] > DIFFER).any())


def _safe_user(probe, ctx):
    try:
        out = probe.user(ctx)
    except (UserCodeError, Exception):  # noqa: BLE001 - a probe the user's code cannot run gives no evidence
        return None
    return out if isinstance(out, torch.Tensor) else None


def matching_hypotheses(task, ctx: Context) -> list[str]:
    probes = task.probes(ctx)
    users = [_safe_user(p, ctx) for p in probes]
    corrects = [p.expected(CORRECT) for p in probes]
    found: list[str] = []
    for code, variant in task.hypotheses(ctx):
        if code in found:
            continue
        expected = [p.expected(variant) for p in probes]
        if all(_agrees(u, e) for u, e in zip(users, expected)) and any(
            _differs(e, c) for e, c in zip(expected, corrects)
        ):
            found.append(code)
    return found


def diagnose(checks: list[Check], task=None, ctx: Context | None = None) -> list[Diagnosis]:
    """Codes proven by individual checks, then hypotheses that explain the outputs."""
    if not any(c.status in FAILING for c in checks):
        return []
    codes = [code for c in checks for code in c.codes]
    if task is not None and ctx is not None:
        codes += matching_hypotheses(task, ctx)
    return explain(codes)
