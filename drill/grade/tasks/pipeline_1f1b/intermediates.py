"""What ``drill grade --trace`` compares the user's schedule_1f1b against, value by value: for 4 stages and 6
micro-batches, then for 4 stages and 2 micro-batches (fewer than stages: the warm-up is clipped), per stage
its warm-up forwards, its ops after the steady state, and its whole sequence; then the schedule."""

from __future__ import annotations

from drill.grade.trace_values import ValueCase

CALLS = ((4, 6, "4 stages, 6 micro-batches", "4 个 stage、6 个 micro-batch"),
         (4, 2, "4 stages, 2 micro-batches (fewer than stages)", "4 个 stage、2 个 micro-batch（比 stage 少）"))  # fmt: skip


def steps_for(p: int, m: int) -> tuple[list[tuple[str, object]], dict[str, str]]:
    steps, zh, schedule = [], {}, []
    for s in range(p):
        warmup = min(p - s - 1, m)
        ops = [("F", i) for i in range(warmup)]
        names = (f"stage {s} warm-up", f"stage {s} after the steady state", f"stage {s}")
        zh.update({names[0]: f"stage {s} 的热身前向", names[1]: f"stage {s} 稳定阶段之后", names[2]: f"stage {s} 的完整序列"})
        steps.append((names[0], ops))
        for i in range(m - warmup):
            ops = [*ops, ("F", warmup + i), ("B", i)]
        steps.append((names[1], ops))
        ops = [*ops, *(("B", i) for i in range(m - warmup, m))]
        steps.append((names[2], ops))
        schedule.append(ops)
    return [*(step for step in steps if step[1]), ("output", schedule)], zh  # an empty list is no value to match


def case(ctx) -> list[ValueCase]:
    cases = []
    for p, m, en, zh_label in CALLS:
        steps, zh = steps_for(p, m)
        names = {n for n, _ in steps}
        cases.append(ValueCase(ctx.entry, (p, m), steps, zh={k: v for k, v in zh.items() if k in names}, label=(en, zh_label)))
    return cases
