"""What ``drill grade --trace`` compares the user's cosine_with_warmup against: five calls with warmup_steps=10,
total_steps=100, max_lr=1e-3, min_lr=1e-4, one per phase: step 3 (warmup: step / warmup_steps), step 10 (the
peak: progress 0), step 37 (the cosine: progress, cos(π·progress), the factor (1 + cos) / 2, the span
max_lr - min_lr), step 100 (the end: min_lr) and step 130 (after total_steps: min_lr, flat).
"""

from __future__ import annotations

import math

from drill.grade.tasks.lr_schedule.task import BASE
from drill.grade.trace_values import ValueCase
from drill.text.messages import Ev

# one call per phase, and how its divergence is labelled
STEPS = ((3, Ev("at step {step} (warmup)", step=3)), (10, Ev("at step {step} (the peak)", step=10)),
         (37, Ev("at step {step} (the cosine decay)", step=37)), (100, Ev("at step {step} (the end)", step=100)),
         (130, Ev("at step {step} (after total_steps)", step=130)))  # fmt: skip


def steps_at(step: int, warmup_steps: int, total_steps: int, max_lr: float, min_lr: float) -> list[tuple[str, object]]:
    if step < warmup_steps:
        return [
            (Ev("step / warmup_steps"), step / warmup_steps),
            (Ev("max_lr·step"), max_lr * step),
            ("output", max_lr * step / warmup_steps),
        ]
    if step > total_steps:
        return [("output", min_lr)]
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    cos = math.cos(math.pi * progress)
    span = max_lr - min_lr
    return [(Ev("progress"), progress), (Ev("π·progress"), math.pi * progress), (Ev("cos(π·progress)"), cos), (Ev("1 + cos(π·progress)"), 1 + cos),
            (Ev("cosine factor (1 + cos(π·progress)) / 2"), (1 + cos) / 2), (Ev("max_lr - min_lr"), span),
            (Ev("(max_lr - min_lr)·factor"), span * (1 + cos) / 2), ("output", min_lr + span * (1 + cos) / 2)]  # fmt: skip


def case(ctx) -> list[ValueCase]:
    args = (BASE["warmup_steps"], BASE["total_steps"], BASE["max_lr"], BASE["min_lr"])
    cases = []
    for step, label in STEPS:
        cases.append(ValueCase(ctx.entry, (step, *args), steps_at(step, *args), label=label))
    return cases
