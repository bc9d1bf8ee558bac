"""The ``auc`` task: ``roc_auc(scores, labels)`` and ``gauc(scores, labels, groups)``.

ROC AUC as the Mann–Whitney statistic: the probability that a random positive scores above a random negative, a
tie counting one half (as scikit-learn's ``roc_auc_score``, whose trapezoids give the same number). The reference
counts exactly, from the unique scores: wins Σ pos(v)·neg(< v) and ties Σ pos(v)·neg(v), so it is exact for any
ties. GAUC (group AUC, as in Alibaba's DIN paper, Zhou et al. 2018) is the mean of the per-group AUCs weighted by
the group's size, over the groups that hold both classes. The answer may be a Python float or a 0-d tensor; it
is compared to 1e-6 (counts are exact, only the last division rounds). O(n log n) is the point: ``roc_auc`` must
never make a tensor of more than O(n) elements (a ``[positives, negatives]`` comparison matrix), which the largest
tensor its ops produce shows, at n = 3001.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

N = 37
TOLERANCE = 1e-6
MEMORY_N = 3001
MEMORY_LIMIT = 32 * MEMORY_N


@dataclass(frozen=True)
class AUCVariant:
    ties: str = "half"  # half (correct) | win: a tie counts as a win | loss: a tie counts nothing
    flip: bool = False  # True: a negative above a positive counted as the win (1 - AUC)
    weight: str = "size"  # size (correct) | none: the plain mean over groups
    single: str = "skip"  # skip (correct) | half: a one-class group kept with AUC 0.5 | denominator: its size in the weights only
    scope: str = "group"  # group (correct) | global: the pairs across groups counted too


CORRECT_AUC = AUCVariant()


def reference_auc(scores, labels, variant: AUCVariant = CORRECT_AUC) -> float:
    """Exact: wins and ties counted from the unique scores, in float64."""
    pos = labels.bool().reshape(-1).cpu()
    if variant.flip:
        pos = ~pos
    values, inverse = torch.unique(scores.double().reshape(-1).cpu(), sorted=True, return_inverse=True)
    n_pos = torch.bincount(inverse[pos], minlength=len(values)).double()
    n_neg = torch.bincount(inverse[~pos], minlength=len(values)).double()
    below = torch.cumsum(n_neg, 0) - n_neg
    wins, ties = (n_pos * below).sum().item(), (n_pos * n_neg).sum().item()
    share = {"half": 0.5, "win": 1.0, "loss": 0.0}[variant.ties]
    return (wins + share * ties) / (n_pos.sum().item() * n_neg.sum().item())


def reference_gauc(scores, labels, groups, variant: AUCVariant = CORRECT_AUC) -> float:
    if variant.scope == "global":
        return reference_auc(scores, labels, variant)
    total = weights = 0.0
    for g in torch.unique(groups.cpu()):
        at = (groups.cpu() == g).nonzero().reshape(-1)
        lab = labels.cpu()[at].bool()
        size = 1.0 if variant.weight == "none" else float(len(at))
        if lab.all() or not lab.any():
            if variant.single == "half":
                total, weights = total + 0.5 * size, weights + size
            elif variant.single == "denominator":
                weights += size
            continue
        total += size * reference_auc(scores.cpu()[at], lab, variant)
        weights += size
    return total / weights


def value(ret, what: str) -> float:
    """The user's answer as a float: a Python number or a one-element tensor."""
    if isinstance(ret, torch.Tensor) and ret.numel() == 1 and (ret.dim() == 0 or ret.shape == (1,)):
        return float(ret.detach().double().item())
    if isinstance(ret, (int, float)) and not isinstance(ret, bool):
        return float(ret)
    if isinstance(ret, torch.Tensor):
        raise WrongShape(Ev("{name} returned {type} of shape {shape}, not a number (a float or a 0-d tensor)",
                            name=what, type=type(ret).__name__, shape=list(ret.shape)))  # fmt: skip
    raise WrongShape(Ev("{name} returned {type}, not a number (a float or a 0-d tensor)", name=what, type=type(ret).__name__))


def gauc_handle(ctx: Context):
    handle = ctx.user.entry("gauc")
    if handle is None:
        raise UserCodeError(Ev("the file does not define gauc(scores, labels, groups)"), "not-implemented")
    return handle


def run_auc(ctx: Context, scores, labels) -> float:
    return value(ctx.call(ctx.entry, scores, labels), "roc_auc")


def run_gauc(ctx: Context, scores, labels, groups) -> float:
    return value(ctx.call(gauc_handle(ctx), scores, labels, groups), "gauc")


def make_auc_inputs(ctx: Context, offset: int, n: int = N, ties: int = 0, dtype=torch.float32, bool_labels: bool = False):
    """Scores (positives shifted up by 0.8, so the AUC is about 0.7) and labels with both classes; ``ties``: the
    scores rounded to that many levels, so many pairs tie, across classes too."""
    gen = ctx.generator(offset)
    labels = torch.rand(n, generator=gen) < 0.4
    labels[0], labels[1] = True, False
    scores = torch.randn(n, generator=gen, dtype=torch.float64) + 0.8 * labels
    if ties:
        scores = torch.round(scores * ties / 4) * 4 / ties
    return scores.to(dtype).to(ctx.device), (labels if bool_labels else labels.long()).to(ctx.device)


def make_gauc_inputs(ctx: Context, offset: int, n_groups: int = 6, dtype=torch.float32, single: int = 2, ties: bool = True):
    """Groups of 1 to 12 samples under arbitrary, interleaved ids (negative ones too); the first ``single`` groups
    hold one class only; group sizes and the group's own score offsets make the weighting and the pairs across
    groups matter."""
    gen = ctx.generator(offset)
    ids = torch.randperm(10 * n_groups, generator=gen)[:n_groups] * 37 - 100
    parts = []
    for i in range(n_groups):
        size = int(torch.randint(2, 13, (1,), generator=gen)) if i else 1
        labels = torch.rand(size, generator=gen) < 0.5
        if i < single:
            labels[:] = bool(i % 2)
        else:
            labels[0], labels[-1] = True, False
        scores = torch.randn(size, generator=gen, dtype=torch.float64) + 0.7 * labels + 2 * torch.randn(1, generator=gen, dtype=torch.float64)
        if ties:
            scores = torch.round(scores * 2) / 2
        parts.append((scores, labels.long(), torch.full((size,), int(ids[i]))))
    order = torch.randperm(sum(len(p[0]) for p in parts), generator=gen)
    scores, labels, groups = (torch.cat([p[k] for p in parts])[order] for k in range(3))
    return scores.to(dtype).to(ctx.device), labels.to(ctx.device), groups.to(ctx.device)


def verdict(label: str, got: float, truth: float):
    error = abs(got - truth)
    if not error <= TOLERANCE:  # NaN fails too
        return outcome("fail", Ev("{label}: {got:.9g}, expected {truth:.9g} (error {error:.3g}, allowed {allowed:g})",
                                  label=label, got=got, truth=truth, error=error, allowed=TOLERANCE))  # fmt: skip
    return outcome("pass", Ev("{label}: {got:.9g} (error {error:.2g})", label=label, got=got, error=error))


def shape_check(ctx: Context, gauc: bool):
    if gauc:
        got = run_gauc(ctx, *make_gauc_inputs(ctx, 1))
    else:
        got = run_auc(ctx, *make_auc_inputs(ctx, 1))
    return outcome("pass", Ev("{name} returns one number ({got:.4g})", name="gauc" if gauc else "roc_auc", got=got))


def auc_check(ctx: Context, offset: int, n: int = N, ties: int = 0, dtype=torch.float32, bool_labels=False):
    scores, labels = make_auc_inputs(ctx, 100 + offset, n, ties, dtype, bool_labels)
    what = (Ev("n={n}", n=n), ties and Ev("scores on {ties} levels (many ties)", ties=ties), str(dtype)[6:], bool_labels and Ev("bool labels"))
    label = Ev("roc_auc ({what})", what=Ev.seq(filter(None, what), ", "))
    return verdict(label, run_auc(ctx, scores, labels), reference_auc(scores, labels))


def special_auc_check(ctx: Context, kind: str):
    scores, labels = make_auc_inputs(ctx, 150, 12)
    if kind == "all-tied":
        scores, label = torch.full_like(scores, 0.25), Ev("roc_auc (all-tied scores, n=12)")
    elif kind == "separable":
        scores, label = labels.double().to(scores.dtype) * 3 + scores.abs() * 0.1, Ev("roc_auc (separable scores, n=12)")
    else:  # reversed: every negative above every positive
        scores, label = (1 - labels).double().to(scores.dtype) * 3 + scores.abs() * 0.1, Ev("roc_auc (reversed scores, n=12)")
    return verdict(label, run_auc(ctx, scores, labels), reference_auc(scores, labels))


def gauc_check(ctx: Context, offset: int, n_groups: int = 6, single: int = 2, dtype=torch.float32):
    scores, labels, groups = make_gauc_inputs(ctx, 200 + offset, n_groups, dtype, single)
    label = Ev("gauc ({n} groups of 1 to 12, {single} with one class only, {dtype})", n=n_groups, single=single, dtype=str(dtype)[6:])
    got, truth = run_gauc(ctx, scores, labels, groups), reference_gauc(scores, labels, groups)
    if single and got != got:
        return outcome("fail", Ev("{label}: NaN, expected {truth:.9g}: a group with one class has no AUC and must be skipped", label=label, truth=truth),
                       "gauc-single-class-kept")  # fmt: skip
    return verdict(label, got, truth)


def groups_leak_check(ctx: Context):
    """float64: shifting one group's scores by a constant reorders it against the others, never within itself:
    GAUC must not move (it would, if pairs across groups counted)."""
    scores, labels, groups = make_gauc_inputs(ctx, 300, 5, torch.float64, single=0, ties=False)
    base = run_gauc(ctx, scores, labels, groups)
    for g in torch.unique(groups).tolist():
        moved = torch.where(groups == g, scores + 5.0, scores)
        got = run_gauc(ctx, moved, labels, groups)
        if abs(got - base) > 1e-12:
            return outcome("fail", Ev("shifting group {g}'s scores by +5 (its own order unchanged) moved GAUC from {base:.9g} to "
                                      "{got:.9g}: pairs across groups are counted", g=g, base=base, got=got), "gauc-pairs-across-groups")  # fmt: skip
    return outcome("pass", Ev("shifting one group's scores against the others never moves GAUC (float64)"))


def memory_check(ctx: Context):
    scores, labels = make_auc_inputs(ctx, 400, MEMORY_N)
    ret, (size, shape, op) = ctx.largest(ctx.entry, scores, labels)
    if size > MEMORY_LIMIT:
        return outcome("fail", Ev("n={n}: {op} produced a tensor of shape {shape} ({size} elements), more than {limit} = 32·n: "
                                  "comparing every positive with every negative is O(n²); sort once instead",
                                  n=MEMORY_N, op=op, shape=list(shape), size=size, limit=MEMORY_LIMIT), "auc-quadratic-pairs")  # fmt: skip
    label = Ev("n={n}, largest tensor {size} elements (at most 32·n)", n=MEMORY_N, size=size)
    return verdict(label, value(ret, "roc_auc"), reference_auc(scores, labels))


def extreme_check(ctx: Context):
    """float32 scores from 1e-30 to 1e30 in magnitude, both signs, with exact duplicates: only their order matters."""
    scores, labels = make_auc_inputs(ctx, 500, 41)
    gen = ctx.generator(501)
    scores = (scores.double().sign() * torch.pow(10.0, 30 * torch.rand(41, generator=gen, dtype=torch.float64) ** 0.5 * scores.double().sign())).float()
    scores[5:9] = scores[0]
    return verdict(Ev("roc_auc (float32 scores from 1e-30 to 1e30, both signs, a 5-way tie)"), run_auc(ctx, scores, labels), reference_auc(scores, labels))


@dataclass(frozen=True)
class Probe:
    """float64: roc_auc on tied scores, then gauc on untied ones (so a tie bug names itself in roc_auc alone)."""

    auc: tuple
    gauc: tuple

    def user(self, ctx: Context):
        try:
            first = run_auc(ctx, *(t.clone() for t in self.auc))
            second = run_gauc(ctx, *(t.clone() for t in self.gauc))
        except WrongShape:
            return None
        return torch.tensor([first, second], dtype=torch.float64)

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct AUC" here.
        variant = variant if isinstance(variant, AUCVariant) else CORRECT_AUC
        return torch.tensor([reference_auc(*self.auc, variant), reference_gauc(*self.gauc, variant)], dtype=torch.float64)


HYPOTHESES = (
    ("auc-ties-not-half", AUCVariant(ties="win")),
    ("auc-ties-not-half", AUCVariant(ties="loss")),
    ("auc-inverted", AUCVariant(flip=True)),
    ("gauc-unweighted", AUCVariant(weight="none")),
    ("gauc-single-class-kept", AUCVariant(single="half")),
    ("gauc-single-class-kept", AUCVariant(single="denominator")),
    ("gauc-pairs-across-groups", AUCVariant(scope="global")),
)


class AUCTask:
    name = "auc"

    def checks(self, ctx: Context) -> list[CheckDef]:
        (n,) = ctx.sizes(50, (50, 700), avoid=(64, 128, 256, 512))
        scores, labels, groups = make_gauc_inputs(ctx, 600)
        half = [CheckDef(dtype_id("numerical", dtype), "numerical", partial(auc_check, ctx, 5, 301, 0, dtype)) for dtype in ctx.dtypes[1:]]
        return half + [
            CheckDef("shape.roc-auc", "shape", partial(shape_check, ctx, False)),
            CheckDef("shape.gauc", "shape", partial(shape_check, ctx, True)),
            CheckDef("numerical.no-ties", "numerical", partial(auc_check, ctx, 0)),
            CheckDef("numerical.ties", "numerical", partial(auc_check, ctx, 1, N, 6)),
            CheckDef("numerical.bool-labels", "numerical", partial(auc_check, ctx, 2, 23, 3, bool_labels=True)),
            CheckDef("numerical.drawn", "numerical", partial(auc_check, ctx, 3, n, 20)),
            CheckDef("numerical.float64", "numerical", partial(auc_check, ctx, 4, 101, 9, torch.float64)),
            CheckDef("numerical.all-tied", "numerical", partial(special_auc_check, ctx, "all-tied")),
            CheckDef("numerical.separable", "numerical", partial(special_auc_check, ctx, "separable")),
            CheckDef("numerical.reversed", "numerical", partial(special_auc_check, ctx, "reversed")),
            CheckDef("numerical.gauc", "numerical", partial(gauc_check, ctx, 0, 7, 0)),
            CheckDef("numerical.gauc-one-class-groups", "numerical", partial(gauc_check, ctx, 1, 9, 3)),
            CheckDef("numerical.gauc-float64", "numerical", partial(gauc_check, ctx, 2, 5, 1, torch.float64)),
            CheckDef("mask-leak.groups", "mask-leak", partial(groups_leak_check, ctx)),
            CheckDef("rules.linear-memory", "rules", partial(memory_check, ctx)),
            CheckDef("stability.extreme-scores", "stability", partial(extreme_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: (run_auc(ctx, scores, labels), run_gauc(ctx, scores, labels, groups)),
                             {"scores": scores, "labels": labels, "groups": groups})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(make_auc_inputs(ctx, 1100, 29, 5, torch.float64), make_gauc_inputs(ctx, 1101, 7, torch.float64, 2, ties=False)),
                Probe(make_auc_inputs(ctx, 1102, 17, 3, torch.float64), make_gauc_inputs(ctx, 1103, 5, torch.float64, 1, ties=False))]  # fmt: skip

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = AUCTask()
