"""A learning rate that is inf, then nan."""


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    return float("inf") if step % 2 else float("nan")
