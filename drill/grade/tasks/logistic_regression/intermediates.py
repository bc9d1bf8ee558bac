"""What ``drill grade --trace`` compares the user's fit_logistic_regression against: x [6, 3], lr = 0.5, three steps
from w = 0, b = 0; per step the logits x·w + b, σ(z), the residual σ(z) - y, xᵀ(σ(z) - y), the gradients of w and
b (divided by N), lr times each, and the new w and b (the last w is the output). Stress inputs, when a bce check failed: bce_with_logits on
ordinary logits, and on logits of ±750 to ±1000 (beyond float64's exp) when the large-logits check failed (its log1p(exp(-|z|)) form)."""

from __future__ import annotations

import torch

from drill.grade.tasks.logistic_regression.task import ENTRY_BCE
from drill.grade.trace_match import Case

N, D, LR, STEPS = 6, 3, 0.5, 3
LARGE = ("logits of ±750 to ±1000 (exp overflows float64)", "logit 在 ±750 到 ±1000 之间（exp 在 float64 下也溢出）")
ORDINARY = ("bce_with_logits on ordinary logits", "普通大小的 logit 上调用 bce_with_logits")


def fit_steps(x, y) -> list[tuple[str, torch.Tensor]]:
    w, b = torch.zeros(D, dtype=torch.float64), torch.zeros((), dtype=torch.float64)
    steps = [("x", x), ("y", y)]
    for t in range(1, STEPS + 1):
        z = x @ w + b
        p = torch.sigmoid(z)
        e = p - y
        gw, gb = x.T @ e / N, e.mean()
        w, b = w - LR * gw, b - LR * gb
        steps += [(f"logits x·w + b, step {t}", z), (f"σ(z), step {t}", p), (f"residual σ(z) - y, step {t}", e),
                  (f"xᵀ(σ(z) - y), step {t}", x.T @ e), (f"sum of residuals, step {t}", e.sum()),
                  (f"gradient of w, step {t}", gw), (f"gradient of b, step {t}", gb), (f"lr·grad w, step {t}", LR * gw),
                  (f"lr·grad b, step {t}", LR * gb), ("output" if t == STEPS else f"w after step {t}", w), (f"b after step {t}", b)]  # fmt: skip
    return steps


def zh_of(name: str) -> str:
    base, _, step = name.rpartition(", step ")
    words = {"logits x·w + b": "logit x·w + b", "σ(z)": "σ(z)", "residual σ(z) - y": "残差 σ(z) - y", "xᵀ(σ(z) - y)": "xᵀ(σ(z) - y)",
             "sum of residuals": "残差之和", "gradient of w": "w 的梯度", "gradient of b": "b 的梯度", "lr·grad w": "lr 乘 w 的梯度",
             "lr·grad b": "lr 乘 b 的梯度"}  # fmt: skip
    if name.startswith(("w after step", "b after step")):
        return f"第 {name.split()[-1]} 步之后的 {name[0]}"
    return f"第 {step} 步的{words[base]}"


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(N, D, generator=gen, dtype=torch.float64)
    y = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    steps = fit_steps(x, y)
    zh = {name: zh_of(name) for name, _ in steps if name not in ("x", "y", "output")}
    return Case(ctx.entry, (x, y, LR, STEPS), steps, returned=("output", f"b after step {STEPS}"), zh=zh,
                factors=[(1 / N, "the gradient not divided by N", "梯度没有除以 N"), (-1.0, "a step up the gradient", "沿梯度方向走了一步")])  # fmt: skip


def bce_case(ctx, large: bool) -> Case:
    gen = torch.Generator().manual_seed(11)
    z = 3 * torch.randn(9, generator=gen, dtype=torch.float64)
    if large:
        z = torch.tensor([-950.0, 800.0, -750.0, 900.0, -820.0, 1000.0, 770.0, -880.0, 860.0], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    softplus = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))
    losses = softplus - z * y
    steps = [("logits", z), ("targets", y), ("|z|", z.abs()), ("-|z|", -z.abs()), ("exp(-|z|)", torch.exp(-z.abs())),
             ("log1p(exp(-|z|))", torch.log1p(torch.exp(-z.abs()))), ("max(z, 0)", z.clamp(min=0)), ("z·y", z * y),
             ("log(1 + e^z)", softplus), ("-log σ(z)", softplus - z), ("-log(1 - σ(z))", softplus),
             ("per-element losses", losses), ("sum of losses", losses.sum()), ("output", losses.mean())]  # fmt: skip
    if not large:
        steps[2:2] = [("σ(z)", torch.sigmoid(z)), ("1 - σ(z)", 1 - torch.sigmoid(z)), ("log σ(z)", torch.log(torch.sigmoid(z))),
                      ("log(1 - σ(z))", torch.log(1 - torch.sigmoid(z))), ("exp(z)", torch.exp(z))]  # fmt: skip
    zh = {"targets": "目标 targets", "per-element losses": "逐元素的损失", "sum of losses": "损失之和"}
    return Case(ctx.user.entry(ENTRY_BCE), (z, y), steps, zh=zh, label=LARGE if large else ORDINARY)


def stress(ctx, failed: set[str]) -> list[Case]:
    """bce_with_logits itself when one of its checks failed: on ordinary logits, then on large ones."""
    found = []
    if any(name.startswith("numerical.bce") for name in failed) or "gradient.bce-logits" in failed:
        found.append(bce_case(ctx, large=False))
    if "stability.large-logits" in failed:
        found.append(bce_case(ctx, large=True))
    return found
