"""Name the likely mistake: test bug hypotheses against the user's own outputs.

A hypothesis (a reference Variant) explains the user's code when the user's output equals
the variant's on every probe, and the variant differs from the correct reference on at
least one: so a bug that only shows with masks is not "confirmed" by unmasked probes alone.
"Equals" is to rounding, or to a tiny fraction of how far the variant is from the correct
output (a float32 angle table in a float64 probe is still that variant). When no single
hypothesis explains the outputs, pairs of independent ones are tried (scale-missing together
with mask-after-softmax), so two classic bugs at once are both named.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from itertools import combinations

import torch

from drill.diagnosis_codes import explain
from drill.grade.context import Context
from drill.grade.remote import UserCodeError
from drill.grade.reference import CORRECT
from drill.grade.report import FAILING, Check, Diagnosis

MATCH = 1e-6  # float64 probes: a matching variant agrees to rounding
NEAR = 1e-4  # ... or to this fraction of the variant's distance from the correct output
DIFFER = 1e-3

# A confirmed hypothesis that makes another code's check fail as a side effect: that code is not a second bug.
IMPLIES = {
    "cross-qkv-source-swapped": {"wrong-output-shape"},  # queries from the context: Tk output rows, not Tq
    "causal-blocks-self": {"unstable-softmax"},  # row 0 may attend to nothing: NaN from the mask, not from exp
    "padding-query-rows-masked": {"unstable-softmax"},
    "padding-length-off-by-one": {"unstable-softmax"},  # lengths - 1 leaves a length-1 sample no key
    "kv-cache-stale-state": {"dropout-in-eval"},  # two identical calls differ because the cache grew, not dropout
}


def _separation(expected, corrects) -> float:
    worst = 0.0
    for e, c in zip(expected, corrects):
        both = torch.isfinite(e) & torch.isfinite(c)
        if both.any():
            worst = max(worst, (e - c).abs()[both].max().item())
    return worst


def _agrees(user, expected, separation: float = 0.0) -> bool:
    if user is None or user.shape != expected.shape:
        return False
    finite = torch.isfinite(expected)
    if not torch.isfinite(user[finite]).all():
        return False
    scale = max(1.0, expected[finite].abs().max().item()) if finite.any() else 1.0
    allowed = max(MATCH * scale, NEAR * separation)
    return bool(((user.detach().double() - expected).abs()[finite] <= allowed).all())


def _differs(expected, correct) -> bool:
    both = torch.isfinite(expected) & torch.isfinite(correct)
    return bool(((expected - correct).abs()[both] > DIFFER).any())


def _safe_user(probe, ctx):
    try:
        out = probe.user(ctx)
    except (UserCodeError, Exception):  # noqa: BLE001 - a probe the user's code cannot run gives no evidence
        return None
    return out if isinstance(out, torch.Tensor) else None


def combine(a, b):
    """One variant with both mistakes, or None when they touch the same knob (or are not the same kind)."""
    if type(a) is not type(b) or not is_dataclass(a):
        return None
    default = type(a)()
    changes = {}
    for f in fields(a):
        x, y, d = getattr(a, f.name), getattr(b, f.name), getattr(default, f.name)
        if x == d:
            changes[f.name] = y
        elif y == d:
            changes[f.name] = x
        elif is_dataclass(x):
            inner = combine(x, y)
            if inner is None:
                return None
            changes[f.name] = inner
        else:
            return None
    return replace(a, **changes)


def _explains(variant, probes, users, corrects) -> bool:
    try:
        expected = [p.expected(variant) for p in probes]
    except (RuntimeError, ValueError, IndexError, KeyError):  # a combination the reference cannot express
        return False
    separation = _separation(expected, corrects)
    return all(_agrees(u, e, separation) for u, e in zip(users, expected)) and any(
        _differs(e, c) for e, c in zip(expected, corrects)
    )


def matching_hypotheses(task, ctx: Context) -> list[str]:
    probes = task.probes(ctx)
    if not probes:
        return []
    users = [_safe_user(p, ctx) for p in probes]
    if all(u is None for u in users):
        return []
    corrects = [p.expected(CORRECT) for p in probes]
    hypotheses = list(task.hypotheses(ctx))
    found: list[str] = []
    for code, variant in hypotheses:
        if code not in found and _explains(variant, probes, users, corrects):
            found.append(code)
    if found or all(u is not None and _agrees(u, c) for u, c in zip(users, corrects)):
        return found  # one bug named, or outputs that are right (a rule or a mutation failed): no pair to find
    for (code_a, a), (code_b, b) in combinations(hypotheses, 2):
        if code_a == code_b or {code_a, code_b} <= set(found):
            continue
        both = combine(a, b)
        if both is not None and both not in (a, b) and _explains(both, probes, users, corrects):
            found += [c for c in (code_a, code_b) if c not in found]
    return found


def diagnose(checks: list[Check], task=None, ctx: Context | None = None) -> list[Diagnosis]:
    """Codes proven by individual checks, then hypotheses that explain the outputs; a check's code that
    a confirmed hypothesis causes as a side effect (IMPLIES, or the task's ``implies``) is dropped."""
    if not any(c.status in FAILING for c in checks):
        return []
    codes = [code for c in checks for code in c.codes]
    if task is not None and ctx is not None:
        implies = {**IMPLIES, **getattr(task, "implies", {})}
        codes += matching_hypotheses(task, ctx)
    else:
        implies = IMPLIES
    side_effects = {effect for code in codes for effect in implies.get(code, ())}
    codes = [c for c in codes if c not in side_effects]
    return explain(codes)
