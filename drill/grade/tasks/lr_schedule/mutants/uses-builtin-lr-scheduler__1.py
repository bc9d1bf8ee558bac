import math

import torch

_SCHEDULES = {}


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    key = (warmup_steps, total_steps, max_lr, min_lr)
    if key not in _SCHEDULES:
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=max_lr)

        def factor(s):
            if s < warmup_steps:
                return s / warmup_steps
            if s > total_steps:
                return min_lr / max_lr
            p = (s - warmup_steps) / (total_steps - warmup_steps)
            return (min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * p))) / max_lr

        _SCHEDULES[key] = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    return max_lr * _SCHEDULES[key].lr_lambdas[0](step)
