"""Name the likely mistake: test bug hypotheses against the user's own outputs.

A hypothesis (a reference Variant) explains the user's code when the user's output equals
the variant's on every probe, and the variant differs from the correct reference on at
least one: so a bug that only shows with masks is not "confirmed" by unmasked probes alone.
"Equals" is to rounding, or to a tiny fraction of how far the variant is from the correct
output (a float32 angle table in a float64 probe is still that variant). A NaN of the variant
is skipped (the user's code may have guarded it: -1e9 instead of -inf), but a variant that
is NaN on most of a probe and equal to the correct output on the rest (a mask inverted under
a softmax over the queries) is tested on nothing there, and explains nothing.
When no single hypothesis explains the outputs, pairs of independent ones are tried
(scale-missing together with mask-after-softmax): two bugs at once are both named.

Confirmed or possible. A code is reported (stored, counted by ``drill stats``, used to make
questions due and to pick the whiteboard hint) only when it is confirmed:
- a hypothesis, alone or in a pair, explains the outputs: confirmed;
- a check's code that the task also models as a hypothesis is tested against the outputs
  too. When a hypothesis or pair explains them, the code stays confirmed only if its variant
  added to that explanation still explains them (the probes do not show that mistake, so the
  check's evidence stands). When nothing explains them, it is confirmed unless its variant
  moves the reference away from the user's output on the probes that fail: a check proves
  its code by itself and a hypothesis models one written form of the mistake, so a form it
  does not model (GAUC's cross-group pairs weighted another way, a NaN where it predicts a
  number) does not overturn the check, but a mistake that would make the outputs worse does
  (a second bug set that check off). Otherwise the code is only a candidate, shown as
  "possibly" and never counted;
- a check's code with no hypothesis to test (a mutated input, a builtin called, a wrong
  shape) is direct evidence: confirmed.
Codes that cannot both hold (CONTRADICTS: a mask ignored is not also inverted) are never
reported together: the one the outputs support best stays, the other is dropped.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass, replace
from itertools import combinations

import torch

from drill.diagnosis_codes import explain
from drill.grade.context import Context
from drill.grade.reference import CORRECT
from drill.grade.remote import UserCodeError
from drill.grade.report import FAILING, Check, Diagnosis

MATCH = 1e-6  # float64 probes: a matching variant agrees to rounding
NEAR = 1e-4  # ... or to this fraction of the variant's distance from the correct output
DIFFER = 1e-3
UNTESTED = 0.5  # a variant NaN on more than this share of a probe (and right elsewhere) is tested on nothing there
AWAY = 0.1  # a check's code is only possible when its variant widens the gap to the user's output by this fraction

# A confirmed hypothesis that makes another code's check fail as a side effect: that code is not a second bug.
IMPLIES = {
    "cross-qkv-source-swapped": {"wrong-output-shape"},  # queries from the context: Tk output rows, not Tq
    "causal-blocks-self": {"unstable-softmax"},  # row 0 may attend to nothing: NaN from the mask, not from exp
    "padding-query-rows-masked": {"unstable-softmax"},
    "padding-length-off-by-one": {"unstable-softmax"},  # lengths - 1 leaves a length-1 sample no key
    "kv-cache-stale-state": {"dropout-in-eval"},  # two identical calls differ because the cache grew, not dropout
}

# Mistakes that exclude each other: a mask that is never applied is neither inverted nor misplaced, a score
# has one scale, a causal mask that is missing is not off by one.
_EXCLUSIVE = (
    ("mask-ignored", "mask-inverted", "mask-after-softmax", "mask-on-queries"),
    ("scale-missing", "scale-by-d", "scale-by-d-model"),
    ("causal-mask-missing", "causal-off-by-one", "causal-blocks-self", "causal-transposed"),
)
CONTRADICTS = {frozenset(pair) for group in _EXCLUSIVE for pair in combinations(group, 2)}


def _separation(expected, corrects) -> float:
    worst = 0.0
    for e, c in zip(expected, corrects):
        both = torch.isfinite(e) & torch.isfinite(c)
        if both.any():
            worst = max(worst, (e - c).abs()[both].max().item())
    return worst


def _agrees(user, expected, separation: float = 0.0) -> bool:
    """``user`` equals ``expected`` wherever ``expected`` is finite."""
    if user is None or user.shape != expected.shape:
        return False
    finite = torch.isfinite(expected)
    if not torch.isfinite(user[finite]).all():
        return False
    scale = max(1.0, expected[finite].abs().max().item()) if finite.any() else 1.0
    allowed = max(MATCH * scale, NEAR * separation)
    return bool(((user.detach().double() - expected).abs()[finite] <= allowed).all())


def _untested(user, expected, correct) -> bool:
    """The variant is NaN on most of this probe where the correct reference and the user's output are finite (the
    user's code may guard a NaN away, -1e9 instead of -inf, but not most of it), and its finite rest does not
    differ from the correct output: nothing is left to compare, so the variant predicts nothing on this probe."""
    if user is None or user.shape != expected.shape:
        return False
    guarded = torch.isfinite(user) & ~torch.isfinite(expected) & torch.isfinite(correct)
    return int(guarded.sum()) > UNTESTED * expected.numel() and not _differs(expected, correct)


def _differs(expected, correct) -> bool:
    both = torch.isfinite(expected) & torch.isfinite(correct)
    return bool(((expected - correct).abs()[both] > DIFFER).any())


def _distance(user, expected, keep) -> float:
    """Mean absolute difference over ``keep``; an entry finite in one and not the other counts as a miss of the
    output's scale."""
    if user is None or user.shape != expected.shape:
        return math.inf
    user = user.detach().double()
    fu, fe = torch.isfinite(user), torch.isfinite(expected)
    scale = max(1.0, expected[fe].abs().max().item()) if fe.any() else 1.0
    total = (user - expected).abs()[fu & fe & keep].sum().item() + scale * ((fu != fe) & keep).sum().item()
    return total / max(1, expected.numel())


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


def _includes(base, variant) -> bool:
    """``base`` turns every knob ``variant`` turns, the same way: it makes that mistake already."""
    if type(base) is not type(variant) or not is_dataclass(base):
        return False
    default = type(base)()
    turned = [f.name for f in fields(variant) if getattr(variant, f.name) != getattr(default, f.name)]
    return bool(turned) and all(getattr(base, name) == getattr(variant, name) for name in turned)


class Evidence:
    """The task's probes run once by the user's code and by the correct reference, to test variants against."""

    def __init__(self, task, ctx: Context):
        self.probes = task.probes(ctx)
        self.users = [_safe_user(p, ctx) for p in self.probes]
        self.hypotheses = list(task.hypotheses(ctx)) if self.usable else []
        self.corrects = [p.expected(CORRECT) for p in self.probes] if self.usable else []

    @property
    def usable(self) -> bool:
        return any(u is not None for u in self.users)

    def _expected(self, variant):
        try:
            return [p.expected(variant) for p in self.probes]
        except (RuntimeError, ValueError, IndexError, KeyError):  # a combination the reference cannot express
            return None

    def explains(self, variant) -> bool:
        expected = self._expected(variant)
        if expected is None:
            return False
        separation = _separation(expected, self.corrects)
        return (all(_agrees(u, e, separation) for u, e in zip(self.users, expected))
                and any(_differs(e, c) for e, c in zip(expected, self.corrects))
                and not any(_untested(u, e, c) for u, e, c in zip(self.users, expected, self.corrects)))  # fmt: skip

    def right(self) -> bool:
        return all(u is not None and _agrees(u, c) for u, c in zip(self.users, self.corrects))

    def variants(self, code: str) -> list:
        return [v for c, v in self.hypotheses if c == code]

    def explaining(self) -> tuple[list[str], list]:
        """The codes of the single hypothesis, else the pairs, that explain the outputs, and their variants."""
        found, variants = [], []
        for code, variant in self.hypotheses:
            if code not in found and self.explains(variant):
                found.append(code)
                variants.append(variant)
        if found or self.right():
            return found, variants  # one bug named, or outputs that are right (a rule or a mutation failed)
        for (code_a, a), (code_b, b) in combinations(self.hypotheses, 2):
            if code_a == code_b or {code_a, code_b} <= set(found):
                continue
            both = combine(a, b)
            if both is not None and both not in (a, b) and self.explains(both):
                found += [c for c in (code_a, code_b) if c not in found]
                variants.append(both)
        return found, variants

    def gain(self, code: str) -> float:
        """How much the code's best variant moves the reference toward the user's output on the probes the user
        fails (1: all the way, 0: no nearer, below 0: farther). 1 when the failing probes cannot tell: the variant equals
        the correct output there, or the user's output differs only by a NaN where both are finite (or has
        another shape)."""
        failing = [i for i, (u, c) in enumerate(zip(self.users, self.corrects))
                   if u is not None and u.shape == c.shape and not _agrees(u, c)]  # fmt: skip
        best = -math.inf
        for variant in self.variants(code):
            expected = self._expected(variant)
            if expected is None:
                continue
            if not any(_differs(expected[i], self.corrects[i]) for i in failing):
                return 1.0  # the probes do not show this mistake: the check's evidence stands
            keeps = [~(~torch.isfinite(self.users[i]) & torch.isfinite(expected[i]) & torch.isfinite(self.corrects[i]))
                     for i in failing]  # fmt: skip
            before = sum(_distance(self.users[i], self.corrects[i], keep) for i, keep in zip(failing, keeps))
            if before == 0:
                return 1.0  # a NaN of the user's where both are finite says nothing about which is nearer
            after = sum(_distance(self.users[i], expected[i], keep) for i, keep in zip(failing, keeps))
            best = max(best, 1 - after / before)
        return best

    def still_explained(self, code: str, explanation: list) -> bool:
        """Adding ``code``'s mistake to an explaining variant still explains the outputs (the probes cannot see it),
        or that variant makes the mistake already (clip-when-below modelled without the epsilon too)."""
        for variant in self.variants(code):
            for base in explanation:
                if _includes(base, variant):
                    return True
                both = combine(base, variant)
                if both is not None and self.explains(both):
                    return True
        return False


def judge(checks: list[Check], task=None, ctx: Context | None = None) -> tuple[list[str], list[str]]:
    """(confirmed codes, candidate codes); see the module docstring for which is which."""
    if not any(c.status in FAILING for c in checks):
        return [], []
    from_checks = list(dict.fromkeys(code for c in checks for code in c.codes))
    implies = {**IMPLIES, **getattr(task, "implies", {})} if task is not None else IMPLIES
    evidence = Evidence(task, ctx) if task is not None and ctx is not None else None
    if evidence is None or not evidence.usable:
        return _consistent(_without_side_effects(from_checks, implies), {}), []
    found, explanation = evidence.explaining()
    modelled = {code for code, _ in evidence.hypotheses}
    support = {code: math.inf for code in found}
    for code in from_checks:
        if code in found or code not in modelled:
            support[code] = math.inf  # explained, or direct evidence with no hypothesis to test
        elif explanation:
            support[code] = 1.0 if evidence.still_explained(code, explanation) else -math.inf
        else:
            support[code] = evidence.gain(code)
    codes = list(dict.fromkeys([*from_checks, *found]))
    candidates = [c for c in codes if support[c] <= -AWAY]
    confirmed = _consistent(_without_side_effects([c for c in codes if c not in candidates], implies), support)
    candidates = [c for c in _without_side_effects(candidates, implies) if not _contradicts(c, confirmed)]
    return confirmed, candidates


def _without_side_effects(codes: list[str], implies: dict) -> list[str]:
    side_effects = {effect for code in codes for effect in implies.get(code, ())}
    return [c for c in codes if c not in side_effects]


def _contradicts(code: str, others) -> bool:
    return any(frozenset((code, o)) in CONTRADICTS for o in others)


def _consistent(codes: list[str], support: dict) -> list[str]:
    """Drop the less supported of two codes that contradict each other (the first on a tie)."""
    kept: list[str] = []
    for code in sorted(codes, key=lambda c: -support.get(c, 0.0)):
        if not _contradicts(code, kept):
            kept.append(code)
    return [c for c in codes if c in kept]


def diagnose_all(checks: list[Check], task=None, ctx: Context | None = None) -> tuple[list[Diagnosis], list[Diagnosis]]:
    """(diagnosis, candidates): the confirmed codes and the possible ones, each explained."""
    confirmed, candidates = judge(checks, task, ctx)
    return explain(confirmed), explain(candidates)


def diagnose(checks: list[Check], task=None, ctx: Context | None = None) -> list[Diagnosis]:
    """The confirmed codes only: codes proven by checks and hypotheses that explain the outputs; a check's code
    that a confirmed hypothesis causes as a side effect (IMPLIES, or the task's ``implies``) is dropped."""
    return diagnose_all(checks, task, ctx)[0]
