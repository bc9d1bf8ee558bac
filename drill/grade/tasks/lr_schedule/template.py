import math


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    """The learning rate at ``step``: linear warmup, then cosine decay, then flat. Plain floats, no torch.

    step, warmup_steps, total_steps: ints (0 <= warmup_steps < total_steps); max_lr, min_lr: floats.
    returns a float:
      - warmup, step <= warmup_steps: linear from 0 at step 0 to max_lr at step warmup_steps;
      - decay, warmup_steps <= step <= total_steps: cosine from max_lr down to min_lr at total_steps
        (half a cosine period);
      - after total_steps: min_lr.
    Rules: no torch.optim.lr_scheduler.
    """
    raise NotImplementedError
