"""What ``drill grade --trace`` compares the user's fit_logistic_regression against: x [6, 3], lr = 0.5, three steps
from w = 0, b = 0; per step the logits x·w + b, σ(z), the residual σ(z) - y, xᵀ(σ(z) - y), the gradients of w and
b (divided by N), lr times each, and the new w and b (the last w is the output). Stress inputs, when a bce check failed: bce_with_logits on
ordinary logits, and on logits of ±750 to ±1000 (beyond float64's exp) when the large-logits check failed (its log1p(exp(-|z|)) form)."""

from __future__ import annotations

import torch

from drill.grade.tasks.logistic_regression.task import ENTRY_BCE
from drill.grade.trace_match import Case
from drill.text.messages import Ev

N, D, LR, STEPS = 6, 3, 0.5, 3
LARGE = Ev("logits of ±750 to ±1000 (exp overflows float64)")
ORDINARY = Ev("bce_with_logits on ordinary logits")


def b_after(t: int) -> Ev:
    return Ev("b after step {t}", t=t)


def fit_steps(x, y) -> list[tuple[str, torch.Tensor]]:
    w, b = torch.zeros(D, dtype=torch.float64), torch.zeros((), dtype=torch.float64)
    steps = [("x", x), ("y", y)]
    for t in range(1, STEPS + 1):
        z = x @ w + b
        p = torch.sigmoid(z)
        e = p - y
        gw, gb = x.T @ e / N, e.mean()
        w, b = w - LR * gw, b - LR * gb
        steps += [(Ev("logits x·w + b, step {t}", t=t), z), (Ev("σ(z), step {t}", t=t), p), (Ev("residual σ(z) - y, step {t}", t=t), e),
                  (Ev("xᵀ(σ(z) - y), step {t}", t=t), x.T @ e), (Ev("sum of residuals, step {t}", t=t), e.sum()),
                  (Ev("gradient of w, step {t}", t=t), gw), (Ev("gradient of b, step {t}", t=t), gb),
                  (Ev("lr·grad w, step {t}", t=t), LR * gw), (Ev("lr·grad b, step {t}", t=t), LR * gb),
                  ("output" if t == STEPS else Ev("w after step {t}", t=t), w), (b_after(t), b)]  # fmt: skip
    return steps


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(N, D, generator=gen, dtype=torch.float64)
    y = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    steps = fit_steps(x, y)
    return Case(ctx.entry, (x, y, LR, STEPS), steps, returned=("output", b_after(STEPS)),
                factors=[(1 / N, Ev("the gradient not divided by N")), (-1.0, Ev("a step up the gradient"))])  # fmt: skip


def bce_case(ctx, large: bool) -> Case:
    gen = torch.Generator().manual_seed(11)
    z = 3 * torch.randn(9, generator=gen, dtype=torch.float64)
    if large:
        z = torch.tensor([-950.0, 800.0, -750.0, 900.0, -820.0, 1000.0, 770.0, -880.0, 860.0], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    softplus = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))
    losses = softplus - z * y
    steps = [("logits", z), (Ev("targets"), y), ("|z|", z.abs()), ("-|z|", -z.abs()), ("exp(-|z|)", torch.exp(-z.abs())),
             ("log1p(exp(-|z|))", torch.log1p(torch.exp(-z.abs()))), ("max(z, 0)", z.clamp(min=0)), ("z·y", z * y),
             ("log(1 + e^z)", softplus), ("-log σ(z)", softplus - z), ("-log(1 - σ(z))", softplus),
             (Ev("per-element losses"), losses), (Ev("sum of losses"), losses.sum()), ("output", losses.mean())]  # fmt: skip
    if not large:
        steps[2:2] = [("σ(z)", torch.sigmoid(z)), ("1 - σ(z)", 1 - torch.sigmoid(z)), ("log σ(z)", torch.log(torch.sigmoid(z))),
                      ("log(1 - σ(z))", torch.log(1 - torch.sigmoid(z))), ("exp(z)", torch.exp(z))]  # fmt: skip
    return Case(ctx.user.entry(ENTRY_BCE), (z, y), steps, label=LARGE if large else ORDINARY)


def stress(ctx, failed: set[str]) -> list[Case]:
    """bce_with_logits itself when one of its checks failed: on ordinary logits, then on large ones."""
    found = []
    if any(name.startswith("numerical.bce") for name in failed) or "gradient.bce-logits" in failed:
        found.append(bce_case(ctx, large=False))
    if "stability.large-logits" in failed:
        found.append(bce_case(ctx, large=True))
    return found
