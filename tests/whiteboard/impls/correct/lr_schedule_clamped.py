import math


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    """One expression per phase, the progress clamped to [0, 1] instead of a branch after total."""
    warm = max_lr * min(1.0, step / warmup_steps) if warmup_steps > 0 else max_lr
    if step <= warmup_steps:
        return warm
    p = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_lr + (max_lr - min_lr) * (math.cos(math.pi * p) + 1) / 2
