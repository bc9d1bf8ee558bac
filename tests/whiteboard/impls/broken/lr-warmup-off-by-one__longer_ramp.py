import math


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    """Linear warmup that divides by warmup_steps + 1, so it never quite reaches max_lr before the decay."""
    if step >= total_steps:
        return min_lr
    if step < warmup_steps:
        ramp = step / (warmup_steps + 1)
        return ramp * max_lr
    t = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return min_lr + (max_lr - min_lr) * (math.cos(math.pi * t) + 1) / 2
