import math


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    """nanoGPT's get_lr, with the warmup that starts at 0."""
    if step < warmup_steps:
        return max_lr * step / warmup_steps
    if step > total_steps:
        return min_lr
    decay_ratio = (step - warmup_steps) / (total_steps - warmup_steps)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)
