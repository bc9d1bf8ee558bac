"""A learning rate of 10**400: an int no float can hold."""


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    return 10**400
