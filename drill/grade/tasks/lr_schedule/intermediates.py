"""What ``drill grade --trace`` compares the user's cosine_with_warmup against: five calls with warmup_steps=10,
total_steps=100, max_lr=1e-3, min_lr=1e-4, one per phase: step 3 (warmup: step / warmup_steps), step 10 (the
peak: progress 0), step 37 (the cosine: progress, cos(π·progress), the factor (1 + cos) / 2, the span
max_lr - min_lr), step 100 (the end: min_lr) and step 130 (after total_steps: min_lr, flat).
"""

from __future__ import annotations

import math

from drill.grade.tasks.lr_schedule.task import BASE
from drill.grade.trace_values import ValueCase

STEPS = ((3, "warmup", "预热阶段"), (10, "the peak", "峰值"), (37, "the cosine decay", "余弦衰减"), (100, "the end", "终点"),
         (130, "after total_steps", "total_steps 之后"))  # fmt: skip
ZH = {"step / warmup_steps": "预热比例 step / warmup_steps", "max_lr·step": "max_lr 乘以 step", "progress": "进度",
      "π·progress": "π 乘以进度", "cos(π·progress)": "cos(π·进度)", "1 + cos(π·progress)": "1 + cos(π·进度)",
      "cosine factor (1 + cos(π·progress)) / 2": "余弦系数 (1 + cos(π·进度)) / 2", "max_lr - min_lr": "学习率区间 max_lr - min_lr",
      "(max_lr - min_lr)·factor": "区间乘以余弦系数"}  # fmt: skip


def steps_at(step: int, warmup_steps: int, total_steps: int, max_lr: float, min_lr: float) -> list[tuple[str, object]]:
    if step < warmup_steps:
        return [
            ("step / warmup_steps", step / warmup_steps),
            ("max_lr·step", max_lr * step),
            ("output", max_lr * step / warmup_steps),
        ]
    if step > total_steps:
        return [("output", min_lr)]
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    cos = math.cos(math.pi * progress)
    span = max_lr - min_lr
    return [("progress", progress), ("π·progress", math.pi * progress), ("cos(π·progress)", cos), ("1 + cos(π·progress)", 1 + cos),
            ("cosine factor (1 + cos(π·progress)) / 2", (1 + cos) / 2), ("max_lr - min_lr", span),
            ("(max_lr - min_lr)·factor", span * (1 + cos) / 2), ("output", min_lr + span * (1 + cos) / 2)]  # fmt: skip


def case(ctx) -> list[ValueCase]:
    args = (BASE["warmup_steps"], BASE["total_steps"], BASE["max_lr"], BASE["min_lr"])
    cases = []
    for step, en, zh in STEPS:
        steps = steps_at(step, *args)
        cases.append(ValueCase(ctx.entry, (step, *args), steps, zh={n: ZH[n] for n, _ in steps if n in ZH},
                               label=(f"at step {step} ({en})", f"第 {step} 步（{zh}）")))  # fmt: skip
    return cases
