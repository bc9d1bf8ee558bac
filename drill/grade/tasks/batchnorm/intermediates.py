"""What ``drill grade --trace`` compares the user's BatchNorm against, in train mode (its own module, weight and bias
set by drill): x [4, 3, 5], the per-channel batch mean, x - mean, its square, the biased variance, var + eps, its
square root, x̂, x̂·weight, the output; then the running updates with momentum 0.1: momentum·mean,
(1 - momentum)·running_mean, the new running_mean, the unbiased variance, and the new running_var. The stress
input, when an eval check failed: a second module trained on one batch, then called in eval, whose statistics
are the running ones."""

from __future__ import annotations

import torch

from drill.grade.tasks.batchnorm.task import build, set_mode
from drill.grade.trace_match import Case
from drill.text.messages import Ev

SHAPE, M, EPS = (4, 3, 5), 0.1, 1e-5
EVAL = Ev("an eval call after one train call")
X_HAT, X_W = Ev("x̂ = (x - mean) / sqrt(var + eps)"), Ev("x̂·weight")  # in both the train and the eval steps
NEW_MEAN, NEW_VAR = Ev("new running_mean"), Ev("new running_var")


def x_of(seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    centre = 2 * torch.randn(1, SHAPE[1], 1, generator=gen, dtype=torch.float64)
    return centre + (0.5 + torch.rand(1, SHAPE[1], 1, generator=gen, dtype=torch.float64)) * torch.randn(*SHAPE, generator=gen, dtype=torch.float64)


def train_steps(x, weight, bias, running_mean, running_var) -> list[tuple[str, torch.Tensor]]:
    view = (1, -1, 1)
    mean = x.mean(dim=(0, 2))
    centred = x - mean.reshape(view)
    var = (centred**2).mean(dim=(0, 2))
    root = torch.sqrt(var + EPS)
    x_hat = centred / root.reshape(view)
    n = x.numel() // x.shape[1]
    unbiased = var * n / (n - 1)
    return [("x", x), (Ev("batch mean"), mean), (Ev("x - mean"), centred), (Ev("(x - mean)²"), centred**2), (Ev("biased variance"), var),
            (Ev("var + eps"), var + EPS), (Ev("sqrt(var + eps)"), root), (X_HAT, x_hat),
            (X_W, x_hat * weight.reshape(view)), ("output", x_hat * weight.reshape(view) + bias.reshape(view)),
            (Ev("momentum·mean"), M * mean), (Ev("(1 - momentum)·running_mean"), (1 - M) * running_mean),
            (NEW_MEAN, (1 - M) * running_mean + M * mean), (Ev("unbiased variance"), unbiased),
            (Ev("momentum·unbiased variance"), M * unbiased), (Ev("(1 - momentum)·running_var"), (1 - M) * running_var),
            (NEW_VAR, (1 - M) * running_var + M * unbiased)]  # fmt: skip


def case(ctx) -> Case:
    module, weight, bias = build(ctx, SHAPE[1], torch.float64, 7)
    set_mode(ctx, module, True)
    steps = train_steps(x_of(7), weight, bias, torch.zeros(SHAPE[1], dtype=torch.float64), torch.ones(SHAPE[1], dtype=torch.float64))
    # the buffers' new values are read by no op of the call: the module keeps them (so they are no dead result)
    return Case(module, (x_of(7),), steps, returned=("output", NEW_MEAN, NEW_VAR))


def stress(ctx, failed: set[str]) -> list[Case]:
    """Eval after one train call, when a check of eval mode failed: normalised with the running statistics."""
    if not failed & {"mask-leak.eval-samples", "robustness.eval-keeps-running-stats", "numerical.train-eval-2d", "numerical.train-eval-3d"}:
        return []
    module, weight, bias = build(ctx, SHAPE[1], torch.float64, 8)
    set_mode(ctx, module, True)
    first = x_of(8)
    ctx.call(module, first)
    set_mode(ctx, module, False)
    trained = dict(train_steps(first, weight, bias, torch.zeros(SHAPE[1], dtype=torch.float64), torch.ones(SHAPE[1], dtype=torch.float64)))
    rm, rv = trained[NEW_MEAN], trained[NEW_VAR]
    x = x_of(9)
    view = (1, -1, 1)
    centred = x - rm.reshape(view)
    root = torch.sqrt(rv + EPS)
    x_hat = centred / root.reshape(view)
    steps = [("x", x), (Ev("running_mean"), rm), (Ev("running_var"), rv), (Ev("x - running_mean"), centred), (Ev("sqrt(running_var + eps)"), root),
             (X_HAT, x_hat), (X_W, x_hat * weight.reshape(view)),
             ("output", x_hat * weight.reshape(view) + bias.reshape(view))]  # fmt: skip
    return [Case(module, (x,), steps, label=EVAL)]
