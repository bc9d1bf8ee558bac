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

SHAPE, M, EPS = (4, 3, 5), 0.1, 1e-5
EVAL = ("an eval call after one train call", "先训练一次、再在推理模式下调用")
ZH = {"batch mean": "batch 均值", "batch mean (per channel)": "每个通道的 batch 均值", "x - mean": "x - mean（减去均值）", "(x - mean)²": "减去均值后的平方 (x - mean)²", "var + eps": "方差加 eps",
      "sqrt(var + eps)": "sqrt(方差 + eps)", "sqrt(running_var + eps)": "sqrt(running_var + eps)（running 标准差）",
      "biased variance": "有偏方差", "x̂ = (x - mean) / sqrt(var + eps)": "归一化后的 x̂", "x̂·weight": "x̂ 乘 weight", "momentum·mean": "momentum 乘 batch 均值",
      "(1 - momentum)·running_mean": "(1 - momentum) 乘 running_mean", "new running_mean": "更新后的 running_mean",
      "unbiased variance": "无偏方差", "momentum·unbiased variance": "momentum 乘无偏方差",
      "(1 - momentum)·running_var": "(1 - momentum) 乘 running_var", "new running_var": "更新后的 running_var",
      "running_mean": "running_mean（推理用的均值）", "running_var": "running_var（推理用的方差）",
      "x - running_mean": "x - running_mean（减去 running 均值）"}  # fmt: skip


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
    return [("x", x), ("batch mean", mean), ("x - mean", centred), ("(x - mean)²", centred**2), ("biased variance", var),
            ("var + eps", var + EPS), ("sqrt(var + eps)", root), ("x̂ = (x - mean) / sqrt(var + eps)", x_hat),
            ("x̂·weight", x_hat * weight.reshape(view)), ("output", x_hat * weight.reshape(view) + bias.reshape(view)),
            ("momentum·mean", M * mean), ("(1 - momentum)·running_mean", (1 - M) * running_mean),
            ("new running_mean", (1 - M) * running_mean + M * mean), ("unbiased variance", unbiased),
            ("momentum·unbiased variance", M * unbiased), ("(1 - momentum)·running_var", (1 - M) * running_var),
            ("new running_var", (1 - M) * running_var + M * unbiased)]  # fmt: skip


def case(ctx) -> Case:
    module, weight, bias = build(ctx, SHAPE[1], torch.float64, 7)
    set_mode(ctx, module, True)
    steps = train_steps(x_of(7), weight, bias, torch.zeros(SHAPE[1], dtype=torch.float64), torch.ones(SHAPE[1], dtype=torch.float64))
    # the buffers' new values are read by no op of the call: the module keeps them (so they are no dead result)
    return Case(module, (x_of(7),), steps, zh={n: ZH[n] for n, _ in steps if n in ZH}, returned=("output", "new running_mean", "new running_var"))


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
    rm, rv = trained["new running_mean"], trained["new running_var"]
    x = x_of(9)
    view = (1, -1, 1)
    centred = x - rm.reshape(view)
    root = torch.sqrt(rv + EPS)
    x_hat = centred / root.reshape(view)
    steps = [("x", x), ("running_mean", rm), ("running_var", rv), ("x - running_mean", centred), ("sqrt(running_var + eps)", root),
             ("x̂ = (x - mean) / sqrt(var + eps)", x_hat), ("x̂·weight", x_hat * weight.reshape(view)),
             ("output", x_hat * weight.reshape(view) + bias.reshape(view))]  # fmt: skip
    return [Case(module, (x,), steps, zh={n: ZH[n] for n, _ in steps if n in ZH}, label=EVAL)]
