"""The ``lr_schedule`` task: ``cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0)``.

Plain floats in and out, so the checks compare numbers, step by step, and name the step that
differs. The reference is the closed form: ``max_lr * step / warmup_steps`` during warmup, then
``min_lr + (max_lr - min_lr) * (1 + cos(pi * progress)) / 2`` (the closed form of torch's
``CosineAnnealingLR``, nanoGPT's decay), then ``min_lr``. Python floats are float64: an exact
implementation differs by rounding only, so the tolerance is 1e-9 of max_lr.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

REL = 1e-9  # of max_lr: float64 rounding, nothing more
BASE = dict(warmup_steps=10, total_steps=100, max_lr=1e-3, min_lr=1e-4)

FORBIDDEN = {"LRScheduler": Ev("torch.optim.lr_scheduler (LambdaLR, CosineAnnealingLR, SequentialLR, ...)")}  # the rule shows it (battery.rules_check)


@dataclass(frozen=True)
class ScheduleVariant:
    warmup: tuple[int, int] = (0, 0)  # (a, b): max_lr * (step + a) / (w + b); (1, 1) is nanoGPT's, (0, 0) correct
    period: str = "half"  # half: cos(pi p) (correct) | full: cos(2 pi p) | quarter: cos(pi p / 2) | from-zero: p = step / total
    floor: str = "flat"  # flat (correct) | ignored: decays to 0 and stays | ignored-decay: decays to 0, min_lr after total
    #                    | unclamped: the cosine goes on after total | added: min_lr + max_lr * c


CORRECT_SCHEDULE = ScheduleVariant()


def reference(step, warmup_steps, total_steps, max_lr, min_lr=0.0, variant: ScheduleVariant = CORRECT_SCHEDULE) -> float:
    w, t = warmup_steps, total_steps
    if step < w:
        a, b = variant.warmup
        return max_lr * (step + a) / max(w + b, 1)
    low = 0.0 if variant.floor in ("ignored", "ignored-decay") else min_lr
    if step > t and variant.floor != "unclamped":
        return min_lr if variant.floor == "ignored-decay" else low
    p = step / t if variant.period == "from-zero" else (step - w) / (t - w)
    c = {"half": 0.5 * (1 + math.cos(math.pi * p)), "full": 0.5 * (1 + math.cos(2 * math.pi * p)),
         "quarter": math.cos(math.pi * p / 2), "from-zero": 0.5 * (1 + math.cos(math.pi * p))}[variant.period]  # fmt: skip
    if variant.floor == "added":
        return min_lr + max_lr * c
    return low + (max_lr - low) * c


def lr(ctx: Context, step, config: dict, keywords: bool = False) -> float:
    """The user's learning rate at ``step`` as a float: a number, or a tensor of one element."""
    if keywords:
        value = ctx.call(ctx.entry, step=step, **config)
    else:
        positional = [config[k] for k in ("warmup_steps", "total_steps", "max_lr")]
        rest = {k: v for k, v in config.items() if k == "min_lr"}
        value = ctx.call(ctx.entry, step, *positional, **rest)
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WrongShape(not_a_number(step, value))
    return float(value)


def not_a_number(step: int, value) -> Ev:
    return Ev("step {step}: returned {type}, not a number (return a float)", step=step, type=type(value).__name__)


def describe(config: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in config.items())


def steps_check(ctx: Context, config: dict, steps, what: Ev, keywords: bool = False):
    """The user's value at each step against the reference; the first step that differs is the message."""
    for step in steps:
        got, expected = lr(ctx, step, config, keywords), reference(step, **config)
        if not math.isfinite(got) or abs(got - expected) > REL * config["max_lr"]:
            return outcome("fail", Ev("step {step} ({config}): expected {expected:.6g}, got {got:.6g}", step=step,
                                      config=describe(config), expected=expected, got=got))  # fmt: skip
    return outcome("pass", Ev("{what}: {n} steps exact ({config})", what=what, n=len(steps), config=describe(config)))


def drawn_config(ctx: Context) -> tuple[dict, tuple[int, ...]]:
    """A configuration and steps drawn from the grade's seed: warmup, decay, the end and past it."""
    rng = random.Random(ctx.seed * 1000 + 300)
    w = rng.randint(2, 60)
    t = w + rng.randint(5, 900)
    max_lr = round(10 ** rng.uniform(-5, 0), 8)
    config = dict(warmup_steps=w, total_steps=t, max_lr=max_lr, min_lr=round(max_lr * rng.uniform(0.01, 0.5), 10))
    steps = sorted({0, rng.randrange(1, w), w, t, t + rng.randint(1, 50), *(rng.randint(w + 1, t - 1) for _ in range(6))})
    return config, tuple(steps)


def drawn_check(ctx: Context):
    config, steps = drawn_config(ctx)
    return steps_check(ctx, config, steps, Ev("a configuration drawn from the seed"))


def type_check(ctx: Context):
    for step in (0, 5, 50):
        value = ctx.call(ctx.entry, step, 10, 100, 1e-3, 1e-4)
        if isinstance(value, bool) or not isinstance(value, (int, float, torch.Tensor)):
            return outcome("fail", not_a_number(step, value))
        if isinstance(value, torch.Tensor) and value.numel() != 1:
            return outcome("fail", Ev("step {step}: returned a tensor of shape {shape}, not one number", step=step, shape=list(value.shape)))
    return outcome("pass", Ev("returns one number per step"))


def bounds_check(ctx: Context):
    """Up during warmup, down after, never outside [min_lr, max_lr] once warm."""
    c = dict(warmup_steps=7, total_steps=45, max_lr=3e-4, min_lr=3e-5)
    values = [lr(ctx, s, c) for s in range(0, 61)]
    tol = REL * c["max_lr"]
    for s in range(1, 61):
        rising = s <= c["warmup_steps"]
        found = dict(s=s, value=values[s], before=values[s - 1], prev=s - 1, config=describe(c))
        if rising and values[s] < values[s - 1] - tol:
            return outcome("fail", Ev("step {s}: {value:.6g} after {before:.6g} at step {prev}: the warmup must rise ({config})", **found))
        if not rising and values[s] > values[s - 1] + tol:
            return outcome("fail", Ev("step {s}: {value:.6g} after {before:.6g} at step {prev}: the decay must never rise ({config})",
                                      **found))  # fmt: skip
        if s >= c["warmup_steps"] and not (c["min_lr"] - tol <= values[s] <= c["max_lr"] + tol):
            return outcome("fail", Ev("step {s}: {value:.6g} is outside [min_lr, max_lr] ({config})", s=s, value=values[s], config=describe(c)))
    return outcome("pass", Ev("rises during warmup, never rises after, stays within [min_lr, max_lr] (steps 0..60)"))


def no_warmup_check(ctx: Context):
    c = dict(warmup_steps=0, total_steps=20, max_lr=0.5, min_lr=0.05)
    return steps_check(ctx, c, (0, 1, 10, 20, 25), Ev("warmup_steps=0 (step 0 is max_lr)"))


@dataclass(frozen=True)
class Probe:
    config: tuple
    steps: tuple[int, ...]

    def user(self, ctx: Context):
        return torch.tensor([lr(ctx, s, dict(self.config)) for s in self.steps], dtype=torch.float64)

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct schedule" here.
        variant = variant if isinstance(variant, ScheduleVariant) else CORRECT_SCHEDULE
        return torch.tensor([reference(s, **dict(self.config), variant=variant) for s in self.steps], dtype=torch.float64)


HYPOTHESES = (
    # every off-by-one of the warmup ramp: the step counted from 1, the warmup length one longer or shorter, or both
    *(("lr-warmup-off-by-one", ScheduleVariant(warmup=(a, b))) for a in (0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0)),
    ("lr-cosine-period", ScheduleVariant(period="full")),
    ("lr-cosine-period", ScheduleVariant(period="quarter")),
    ("lr-cosine-period", ScheduleVariant(period="from-zero")),
    ("lr-no-floor", ScheduleVariant(floor="ignored")),
    ("lr-no-floor", ScheduleVariant(floor="ignored-decay")),
    ("lr-no-floor", ScheduleVariant(floor="unclamped")),
    ("lr-no-floor", ScheduleVariant(floor="added")),
)


class LrScheduleTask:
    name = "lr_schedule"
    forbidden = FORBIDDEN
    builtin_what = Ev("learning-rate schedulers")
    builtin_code = "uses-builtin-lr-scheduler"

    def checks(self, ctx: Context) -> list[CheckDef]:
        w, t = BASE["warmup_steps"], BASE["total_steps"]
        paper = dict(warmup_steps=2000, total_steps=102_000, max_lr=3e-4, min_lr=3e-5)
        no_min = {k: v for k, v in BASE.items() if k != "min_lr"}
        return [
            CheckDef("shape.returns-number", "shape", partial(type_check, ctx)),
            CheckDef("numerical.warmup", "numerical", partial(steps_check, ctx, BASE, (0, 1, 3, 5, 9), Ev("warmup"))),
            CheckDef("numerical.peak", "numerical", partial(steps_check, ctx, BASE, (w,), Ev("max_lr at step warmup_steps"))),
            CheckDef("numerical.decay", "numerical", partial(steps_check, ctx, BASE, (11, 20, 37, 64, 81, 99), Ev("cosine decay"))),
            CheckDef("numerical.midpoint", "numerical", partial(steps_check, ctx, BASE, ((w + t) // 2,), Ev("(max_lr + min_lr) / 2 halfway"))),
            CheckDef("numerical.end", "numerical", partial(steps_check, ctx, BASE, (t,), Ev("min_lr at step total_steps"))),
            CheckDef("numerical.min-lr-default", "numerical",
                     partial(steps_check, ctx, no_min, (0, 4, 10, 55, 100, 130), Ev("min_lr omitted (0.0)"))),  # fmt: skip
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.llm-scale", "numerical",
                     partial(steps_check, ctx, paper, (1000, 2000, 77_000, 102_000), Ev("2k warmup, 100k decay"))),  # fmt: skip
            CheckDef("stability.after-total", "stability",
                     partial(steps_check, ctx, BASE, (t + 1, t + 7, 2 * t, 10 * t), Ev("flat min_lr after total_steps"))),  # fmt: skip
            CheckDef("stability.monotone-bounded", "stability", partial(bounds_check, ctx)),
            CheckDef("robustness.no-warmup", "robustness", partial(no_warmup_check, ctx)),
            CheckDef("robustness.keyword-arguments", "robustness",
                     partial(steps_check, ctx, BASE, (3, 30), Ev("called with keyword arguments"), True)),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        steps = tuple(range(0, 56))
        return [
            Probe(tuple(dict(warmup_steps=8, total_steps=40, max_lr=6.0, min_lr=0.5).items()), steps),
            Probe(tuple(dict(warmup_steps=5, total_steps=30, max_lr=4.0).items()), steps),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = LrScheduleTask()
