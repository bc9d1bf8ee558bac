"""The ``pipeline_1f1b`` task: ``schedule_1f1b(n_stages, n_microbatches) -> list[list[tuple[str, int]]]``.

Each stage's sequence of ``('F', m)`` and ``('B', m)``, stages and micro-batches numbered from 0: the
one-forward-one-backward schedule of PipeDream-Flush (Narayanan et al. 2021) as Megatron-LM runs it.
Graded by simulation, not against one fixed order: every stage runs each micro-batch forward and
backward once, in its own order; ``F m`` on stage s waits for ``F m`` on stage s-1, ``B m`` for ``F m``
on the same stage and ``B m`` on stage s+1. With a forward taking 1 unit and a backward 2 (the usual
ratio), the schedule must not deadlock, must keep at most ``n_stages - s`` activations in flight on stage
s (forwarded, not yet backwarded) and must reach the bubble fraction (p-1)/(m+p-1), as the reference does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

T_F, T_B = 1, 2  # time units of one forward and one backward on one stage


@dataclass(frozen=True)
class ScheduleVariant:
    order: str = "1f1b"  # 1f1b (correct) | gpipe: all forwards, then all backwards | bf: steady state B before F
    warmup: int = 0  # added to the correct warm-up count p - s - 1
    reversed_stages: bool = False  # the warm-up counted from the wrong end: s instead of p - s - 1
    clip: str = "yes"  # the warm-up clipped to m (fewer micro-batches than stages) | no: forwards past m, the cooldown
    #                    from the negative id m - warmup | forwards: forwards past m, the backwards still 0..m-1
    cooldown: bool = True  # the remaining backwards after the steady state


CORRECT_SCHEDULE = ScheduleVariant()


def reference(p: int, m: int, variant: ScheduleVariant = CORRECT_SCHEDULE) -> list[list[tuple[str, int]]]:
    out = []
    for s in range(p):
        if variant.order == "gpipe":
            out.append([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
            continue
        warmup = max(0, (s if variant.reversed_stages else p - s - 1) + variant.warmup)
        warmup = min(warmup, m) if variant.clip == "yes" else warmup
        ops = [("F", i) for i in range(warmup)]
        for i in range(m - warmup):
            pair = [("F", warmup + i), ("B", i)]
            ops += pair[::-1] if variant.order == "bf" else pair
        if variant.cooldown:
            first = max(0, m - warmup) if variant.clip == "forwards" else m - warmup  # "no": a negative id, as the code would
            ops += [("B", i) for i in range(first, m)]
        out.append(ops)
    return out


def schedule_of(value, p: int) -> list[list[tuple[str, int]]]:
    """The user's return value as p lists of (kind, micro-batch) pairs, or WrongShape naming what is off."""
    if not isinstance(value, (list, tuple)):
        raise WrongShape(Ev("returned {type}, not a list of {p} per-stage lists", type=type(value).__name__, p=p))
    if len(value) != p:
        raise WrongShape(Ev("returned {n} per-stage lists for n_stages={p}", n=len(value), p=p))
    stages = []
    for s, ops in enumerate(value):
        if not isinstance(ops, (list, tuple)):
            raise WrongShape(Ev("stage {s}: {type}, not a list of ('F', m) / ('B', m)", s=s, type=type(ops).__name__))
        found = []
        for op in ops:
            ok = isinstance(op, (list, tuple)) and len(op) == 2 and op[0] in ("F", "B")
            if not ok or isinstance(op[1], bool) or not isinstance(op[1], int):
                raise WrongShape(Ev("stage {s}: {op} is not ('F', m) or ('B', m) with an int m", s=s, op=repr(op)))
            found.append((op[0], op[1]))
        stages.append(found)
    return stages


def call(ctx: Context, p: int, m: int, keywords: bool = False):
    value = ctx.call(ctx.entry, n_stages=p, n_microbatches=m) if keywords else ctx.call(ctx.entry, p, m)
    return schedule_of(value, p)


def coverage_problem(stages, m: int) -> Ev | None:
    """Each stage must run F m and B m exactly once for every micro-batch 0..m-1."""
    want = sorted([("B", i) for i in range(m)] + [("F", i) for i in range(m)])
    for s, ops in enumerate(stages):
        if sorted(ops) != want:
            extra = [op for op in ops if op not in want or ops.count(op) > 1]
            missing = [op for op in want if op not in ops]
            if not extra:
                what = Ev("stage {s} never runs {op}", s=s, op=op_text(missing[0]))
            elif extra[0] in want:
                what = Ev("stage {s} runs {op} twice", s=s, op=op_text(extra[0]))
            else:
                what = Ev("stage {s} runs {op} (no such micro-batch)", s=s, op=op_text(extra[0]))
            return Ev("{what} (n_microbatches={m}: every stage runs ('F', i) and ('B', i) once for i in 0..{last})",
                      what=what, m=m, last=m - 1)  # fmt: skip
    return None


@dataclass
class Simulation:
    finish: dict  # (stage, kind, mb) -> finish time
    makespan: int
    stuck: tuple | None  # (stage, op, what it waits for) when the schedule deadlocks
    in_flight: list[int]  # the most activations held at once, per stage


def simulate(stages, p: int) -> Simulation:
    """Run each stage's ops in its order, as soon as its dependencies finish (zero-latency links)."""
    finish: dict = {}
    nxt, free = [0] * p, [0] * p
    progress = True
    while progress:
        progress = False
        for s in range(p):
            while nxt[s] < len(stages[s]):
                kind, mb = stages[s][nxt[s]]
                deps = [(s, "F", mb)] if kind == "B" else []
                if kind == "F" and s > 0:
                    deps.append((s - 1, "F", mb))
                if kind == "B" and s < p - 1:
                    deps.append((s + 1, "B", mb))
                if any(d not in finish for d in deps):
                    break
                start = max([free[s]] + [finish[d] for d in deps])
                free[s] = finish[(s, kind, mb)] = start + (T_F if kind == "F" else T_B)
                nxt[s] += 1
                progress = True
    stuck = None
    for s in range(p):
        if nxt[s] < len(stages[s]):
            kind, mb = stages[s][nxt[s]]
            wait = [d for d in ([(s, "F", mb)] if kind == "B" else []) + ([(s - 1, "F", mb)] if kind == "F" and s > 0 else [])
                    + ([(s + 1, "B", mb)] if kind == "B" and s < p - 1 else []) if d not in finish]  # fmt: skip
            stuck = (s, (kind, mb), wait[0] if wait else None)
            break
    flight = []
    for ops in stages:
        held = most = 0
        for kind, _ in ops:
            held += 1 if kind == "F" else -1
            most = max(most, held)
        flight.append(most)
    return Simulation(finish, max(finish.values(), default=0), stuck, flight)


def bubble(p: int, m: int, makespan: int) -> float:
    return 1 - m * (T_F + T_B) / makespan if makespan else 1.0


def ideal_bubble(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)


def op_text(op) -> str:
    return f"('{op[0]}', {op[1]})"


def schedule_check(ctx: Context, p: int, m: int, what: Ev, keywords: bool = False):
    """Coverage, then the simulation: no deadlock, the in-flight limit, the bubble."""
    stages = call(ctx, p, m, keywords)
    problem = coverage_problem(stages, m)
    if problem:
        return outcome("fail", Ev("n_stages={p}, n_microbatches={m}: {what}", p=p, m=m, what=problem))
    sim = simulate(stages, p)
    if sim.stuck:
        s, op, dep = sim.stuck
        waits = Ev("{op} on stage {s}", op=op_text(dep[1:]), s=dep[0]) if dep else Ev("nothing it can get")
        return outcome("fail", Ev("n_stages={p}, n_microbatches={m}: deadlock: stage {s} waits at {op} for {waits}, which never comes: "
                                  "the two orders wait on each other", p=p, m=m, s=s, op=op_text(op), waits=waits))  # fmt: skip
    for s, most in enumerate(sim.in_flight):
        if most > p - s:
            return outcome("fail", Ev("n_stages={p}, n_microbatches={m}: stage {s} holds {most} activations at once (forwarded, not yet "
                                      "backwarded); 1F1B keeps at most n_stages - s = {limit}", p=p, m=m, s=s, most=most, limit=p - s))  # fmt: skip
    got, ideal = bubble(p, m, sim.makespan), ideal_bubble(p, m)
    if got > ideal + 1e-9:
        best = (m + p - 1) * (T_F + T_B)
        return outcome("fail", Ev("n_stages={p}, n_microbatches={m}: bubble fraction {got:.4f}, 1F1B reaches (p-1)/(m+p-1) = {ideal:.4f} "
                                  "(forward 1 unit, backward 2: the schedule takes {took} units, not {best})",
                                  p=p, m=m, got=got, ideal=ideal, took=sim.makespan, best=best))  # fmt: skip
    return outcome("pass", Ev("{what}: n_stages={p}, n_microbatches={m}: no deadlock, in flight {flight} within n_stages - s, "
                              "bubble {got:.4f} = (p-1)/(m+p-1)", what=what, p=p, m=m, flight=sim.in_flight, got=got))  # fmt: skip


def type_check(ctx: Context):
    stages = call(ctx, 3, 5)
    return outcome("pass", Ev("3 per-stage lists of ('F', m) / ('B', m), {n} ops", n=sum(map(len, stages))))


def pure_check(ctx: Context):
    first, second = call(ctx, 4, 6), call(ctx, 4, 6)
    if first != second:
        return outcome("fail", Ev("two identical calls return different schedules"))
    return outcome("pass", Ev("two identical calls return the same schedule"))


def drawn_config(ctx: Context, offset: int) -> tuple[int, int]:
    rng = random.Random(ctx.seed * 1000 + offset)
    p = rng.choice([3, 5, 6, 7])
    return p, rng.randint(p + 1, 3 * p + 1)


def encode(stages, p: int, m: int) -> torch.Tensor:
    """A schedule as [p, 2m + 2p] float64: F i as i + 1, B i as -(i + 1), padded with 0 (for the diagnosis)."""
    width = 2 * m + 2 * p
    out = torch.zeros(p, width, dtype=torch.float64)
    for s, ops in enumerate(stages[:p]):
        row = [(i + 1) if k == "F" else -(i + 1) for k, i in ops][:width]
        out[s, : len(row)] = torch.tensor(row, dtype=torch.float64)
    return out


@dataclass(frozen=True)
class Probe:
    p: int
    m: int

    def user(self, ctx: Context):
        return encode(call(ctx, self.p, self.m), self.p, self.m)

    def expected(self, variant):
        variant = variant if isinstance(variant, ScheduleVariant) else CORRECT_SCHEDULE
        return encode(reference(self.p, self.m, variant), self.p, self.m)


HYPOTHESES = (
    ("pipeline-gpipe-order", ScheduleVariant(order="gpipe")),
    ("pipeline-backward-first", ScheduleVariant(order="bf")),
    ("pipeline-warmup-off-by-one", ScheduleVariant(warmup=1)),
    ("pipeline-warmup-off-by-one", ScheduleVariant(warmup=-1)),
    ("pipeline-warmup-stage-reversed", ScheduleVariant(reversed_stages=True)),
    ("pipeline-warmup-not-clipped", ScheduleVariant(clip="no")),
    ("pipeline-warmup-not-clipped", ScheduleVariant(clip="forwards")),
    ("pipeline-cooldown-missing", ScheduleVariant(cooldown=False)),
)


class Pipeline1F1BTask:
    name = "pipeline_1f1b"

    def checks(self, ctx: Context) -> list[CheckDef]:
        return [
            CheckDef("shape.returns-stages", "shape", partial(type_check, ctx)),
            CheckDef("numerical.base", "numerical", partial(schedule_check, ctx, 4, 8, Ev("the textbook case"))),
            CheckDef("numerical.m-equals-p", "numerical", partial(schedule_check, ctx, 3, 3, Ev("as many micro-batches as stages"))),
            CheckDef("numerical.odd-sizes", "numerical", partial(schedule_check, ctx, 5, 11, Ev("odd sizes"))),
            CheckDef("numerical.drawn", "numerical", partial(schedule_check, ctx, *drawn_config(ctx, 300), Ev("drawn from the seed"))),
            CheckDef("stability.many-microbatches", "stability", partial(schedule_check, ctx, 7, 61, Ev("many micro-batches"))),
            CheckDef("robustness.fewer-microbatches", "robustness",
                     partial(schedule_check, ctx, 6, 4, Ev("fewer micro-batches than stages"))),
            CheckDef("robustness.one-microbatch", "robustness", partial(schedule_check, ctx, 4, 1, Ev("one micro-batch"))),
            CheckDef("robustness.one-stage", "robustness", partial(schedule_check, ctx, 1, 5, Ev("one stage"))),
            CheckDef("robustness.keyword-arguments", "robustness", partial(schedule_check, ctx, 3, 7, Ev("called with keywords"), True)),
            CheckDef("robustness.deterministic", "robustness", partial(pure_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(4, 7), Probe(5, 3), Probe(3, 6)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = Pipeline1F1BTask()
