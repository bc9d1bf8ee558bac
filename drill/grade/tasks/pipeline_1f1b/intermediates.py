"""What ``drill grade --trace`` compares the user's schedule_1f1b against, value by value: for 4 stages and 6
micro-batches, then for 4 stages and 2 micro-batches (fewer than stages: the warm-up is clipped), per stage
its warm-up forwards, its ops after the steady state, and its whole sequence; then the schedule."""

from __future__ import annotations

from drill.grade.trace_values import ValueCase
from drill.text.messages import Ev

CALLS = ((4, 6, Ev("4 stages, 6 micro-batches")), (4, 2, Ev("4 stages, 2 micro-batches (fewer than stages)")))


def steps_for(p: int, m: int) -> list[tuple[str, object]]:
    steps, schedule = [], []
    for s in range(p):
        warmup = min(p - s - 1, m)
        ops = [("F", i) for i in range(warmup)]
        names = (Ev("stage {s} warm-up", s=s), Ev("stage {s} after the steady state", s=s), Ev("stage {s}", s=s))
        steps.append((names[0], ops))
        for i in range(m - warmup):
            ops = [*ops, ("F", warmup + i), ("B", i)]
        steps.append((names[1], ops))
        ops = [*ops, *(("B", i) for i in range(m - warmup, m))]
        steps.append((names[2], ops))
        schedule.append(ops)
    return [*(step for step in steps if step[1]), ("output", schedule)]  # an empty list is no value to match


def case(ctx) -> list[ValueCase]:
    return [ValueCase(ctx.entry, (p, m), steps_for(p, m), label=label) for p, m, label in CALLS]
