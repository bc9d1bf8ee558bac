"""The ``logistic_regression`` task: ``bce_with_logits(logits, targets)`` and ``fit_logistic_regression(x, y, lr, steps)``.

The loss is the mean of ``max(z, 0) - z·y + log1p(exp(-|z|))``, which is finite for any logit; the fit is
full-batch gradient descent from w = 0, b = 0 with the gradient of that mean written by hand,
``dw = xᵀ(σ(xw + b) - y) / N`` and ``db = mean(σ(xw + b) - y)``. The reference runs the same loop in float64
(and in the user's dtype for the tolerance rule). Autograd and torch's BCE are refused at run time: the
gradient is the point of the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

ENTRY_BCE = "bce_with_logits"
LR, STEPS = 0.3, 25
FORBIDDEN = {
    "binary_cross_entropy_with_logits": "F.binary_cross_entropy_with_logits / nn.BCEWithLogitsLoss",
    "binary_cross_entropy": "F.binary_cross_entropy / nn.BCELoss",
    "backward": Ev("autograd (Tensor.backward or torch.autograd.backward)"),  # the rule shows it (battery.rules_check)
    "grad": Ev("autograd (torch.autograd.grad; torch.func.grad calls it)"),  # the rule shows it (battery.rules_check)
    "_make_dual": Ev("forward-mode autograd (torch.func.jvp, torch.autograd.forward_ad)"),  # the rule shows it (battery.rules_check)
}


@dataclass(frozen=True)
class LogRegVariant:
    direction: int = -1  # -1 (correct): w -= lr·grad | +1: gradient ascent
    reduce: str = "mean"  # mean (correct) | sum: the gradient not divided by N
    bias: bool = True  # False: b never updated
    sigmoid: bool = True  # False: the residual z - y, without the sigmoid
    bce_reduce: str = "mean"  # mean (correct) | sum: the loss summed over the elements


CORRECT_LR = LogRegVariant()


def bce_reference(logits, targets, variant: LogRegVariant = CORRECT_LR):
    losses = logits.clamp(min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))
    return losses.mean() if variant.bce_reduce == "mean" else losses.sum()


def fit_reference(x, y, lr, steps, variant: LogRegVariant = CORRECT_LR):
    n = x.shape[0]
    w = torch.zeros(x.shape[1], dtype=x.dtype, device=x.device)
    b = torch.zeros((), dtype=x.dtype, device=x.device)
    for _ in range(steps):
        z = x @ w + b
        residual = (torch.sigmoid(z) if variant.sigmoid else z) - y
        gw, gb = x.T @ residual, residual.sum()
        if variant.reduce == "mean":
            gw, gb = gw / n, gb / n
        w = w + variant.direction * lr * gw
        if variant.bias:
            b = b + variant.direction * lr * gb
    return w, b


def bce_handle(ctx: Context):
    """The user's bce_with_logits (asked once per grade; the entry point stays the fit in messages)."""
    if "_bce" not in vars(ctx):
        name = ctx.user.entry_name
        vars(ctx)["_bce"] = ctx.user.entry(ENTRY_BCE)
        ctx.user.entry_name = name
    handle = vars(ctx)["_bce"]
    if handle is None:
        raise UserCodeError(Ev("the file does not define {name}(logits, targets)", name=ENTRY_BCE), "not-implemented")
    return handle


def run_bce(ctx: Context, logits, targets):
    out = tensor_result(ctx.call(bce_handle(ctx), logits, targets), "bce_with_logits")
    expect_shape(out, (), Ev("the loss"))
    return out


def run_fit(ctx: Context, x, y, lr=LR, steps=STEPS):
    ret = ctx.call(ctx.entry, x, y, lr, steps)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2):
        raise WrongShape(Ev("fit_logistic_regression returned {type}, not (w, b)", type=type(ret).__name__))
    w, b = ret
    if isinstance(b, (int, float)):
        b = torch.tensor(float(b), dtype=x.dtype, device=x.device)
    w, b = tensor_result(w, "w"), tensor_result(b, "b")
    if w.numel() != x.shape[1] or b.numel() != 1:
        raise WrongShape(Ev("w has shape {w} and b {b}, expected [{d}] and a 0-dim b", w=list(w.shape), b=list(b.shape), d=x.shape[1]))
    return w.reshape(x.shape[1]), b.reshape(())


def classification(ctx: Context, offset: int, n: int, d: int, dtype=torch.float64):
    """x [N, D] with a feature scale of ~1.5, labels from a noisy linear rule (both classes present)."""
    gen = ctx.generator(offset)
    x = 1.5 * ctx.randn(n, d, gen=gen, dtype=torch.float64)
    truth = ctx.randn(d, gen=gen, dtype=torch.float64)
    y = ((x @ truth + 0.5 + 0.8 * ctx.randn(n, gen=gen, dtype=torch.float64)) > 0).double()
    y[0], y[1] = 0.0, 1.0
    return x.to(dtype), y.to(dtype)


def logits_and_targets(ctx: Context, offset: int, shape, soft: bool = False, dtype=torch.float64):
    gen = ctx.generator(offset)
    z = 3 * ctx.randn(*shape, gen=gen, dtype=torch.float64)
    t = torch.rand(shape, generator=gen, dtype=torch.float64) if soft else (torch.rand(shape, generator=gen) < 0.5).double()
    return z.to(dtype), t.to(ctx.device, dtype)


def shape_bce_check(ctx: Context, shape):
    z, t = logits_and_targets(ctx, 1, shape, dtype=torch.float32)
    out = run_bce(ctx, z, t)
    if out.dtype != z.dtype:
        return outcome("fail", Ev("the loss dtype is {dtype}, the logits' is {expected}", dtype=str(out.dtype), expected=str(z.dtype)))
    return outcome("pass", Ev("a 0-dim loss from logits {shape}", shape=list(shape)))


def shape_fit_check(ctx: Context, n: int, d: int):
    x, y = classification(ctx, 2, n, d, torch.float32)
    w, b = run_fit(ctx, x, y, LR, 3)
    for name, t in (("w", w), ("b", b)):
        if t.dtype != x.dtype:
            return outcome("fail", Ev("{name} dtype is {dtype}, x's is {expected}", name=name, dtype=str(t.dtype), expected=str(x.dtype)))
    return outcome("pass", Ev("w [{d}] and a 0-dim b from x [{n}, {d}]", d=d, n=n))


def bce_check(ctx: Context, offset: int, shape, soft: bool = False, dtype=torch.float32):
    z, t = logits_and_targets(ctx, 100 + offset, shape, soft)
    truth, same = bce_reference(z, t), bce_reference(z.to(dtype), t.to(dtype))
    if soft:
        what = Ev("logits {shape}, soft targets, {dtype}", shape=list(shape), dtype=str(dtype)[6:])
    else:
        what = Ev("logits {shape}, {dtype}", shape=list(shape), dtype=str(dtype)[6:])
    result = against_truth([(Ev("loss ({what})", what=what), run_bce(ctx, z.to(dtype), t.to(dtype)), truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def fit_check(ctx: Context, offset: int, n: int, d: int, lr=LR, steps=STEPS, dtype=torch.float32):
    x, y = classification(ctx, 200 + offset, n, d)
    truth, same = fit_reference(x, y, lr, steps), fit_reference(x.to(dtype), y.to(dtype), lr, steps)
    w, b = run_fit(ctx, x.to(dtype), y.to(dtype), lr, steps)
    what = Ev("x [{n}, {d}], lr={lr:g}, steps={steps}, {dtype}", n=n, d=d, lr=lr, steps=steps, dtype=str(dtype)[6:])
    result = against_truth([(Ev("w ({what})", what=what), w, truth[0], same[0]), (Ev("b ({what})", what=what), b, truth[1], same[1])])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context):
    """d loss / d logits through the user's bce (autograd runs in the judge's request): (σ(z) - y) / numel."""
    z, t = logits_and_targets(ctx, 300, (6, 7), soft=True)
    leaf = z.float().requires_grad_()
    out = run_bce(ctx, leaf, t.float())
    ctx.call(lambda: (out * 1.7).backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches the logits (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        ref = z.detach().clone().to(precision).requires_grad_()
        (bce_reference(ref, t.to(precision)) * 1.7).backward()
        grads.append(ref.grad)
    return against_truth([(Ev("d loss / d logits"), leaf.grad, *grads)])


def zero_feature_check(ctx: Context):
    """float64: a feature that is 0 for every sample gets no gradient, so its weight stays exactly 0."""
    x, y = classification(ctx, 400, 41, 5)
    x[:, 2] = 0.0
    w, _ = run_fit(ctx, x, y, LR, 10)
    if w[2].item() != 0.0:
        return outcome("fail", Ev("feature 2 is 0 in every sample, yet its weight moved to {w:.3g}: "
                                  "the gradient of w must be xᵀ(σ(z) - y) / N, one entry per feature", w=w[2].item()))  # fmt: skip
    return outcome("pass", Ev("a feature that is always 0 keeps weight 0 (float64)"))


def large_logits_check(ctx: Context):
    """float32 logits of a few hundred either way, half the targets against them: log(σ(z)) and log(1 - σ(z)) break."""
    gen = ctx.generator(500)
    z = (150 + 300 * torch.rand(24, generator=gen, dtype=torch.float64)) * torch.where(torch.rand(24, generator=gen) < 0.5, -1.0, 1.0)
    t = (torch.rand(24, generator=gen) < 0.5).double()
    z, t = z.to(ctx.device), t.to(ctx.device)
    truth, same = bce_reference(z, t), bce_reference(z.float(), t.float())
    out = run_bce(ctx, z.float(), t.float())
    if first_nonfinite(out, truth) is not None:
        return outcome("fail", Ev("logits of ±150 to ±450 (float32) give a loss of {got}, expected {want:.6g}", got=out.item(), want=truth.item()),
                       "logreg-unstable-bce")  # fmt: skip
    result = against_truth([(Ev("loss at logits ±150 to ±450 (float32)"), out, truth, same)])
    if result.status != "pass":  # finite but wrong: unstable only when the same code is right on ordinary logits
        small, small_t = logits_and_targets(ctx, 501, (24,))
        ordinary = against_truth([("", run_bce(ctx, small.float(), small_t.float()), bce_reference(small, small_t),
                                   bce_reference(small.float(), small_t.float()))])  # fmt: skip
        if ordinary.status == "pass":
            result.codes.append("logreg-unstable-bce")
    return result


@dataclass(frozen=True)
class Probe:
    kind: str  # "fit" | "bce"
    a: torch.Tensor
    b: torch.Tensor
    lr: float = LR
    steps: int = 0

    def user(self, ctx: Context):
        if self.kind == "bce":
            return run_bce(ctx, self.a.clone(), self.b.clone()).detach().double().reshape(1)
        w, b = run_fit(ctx, self.a.clone(), self.b.clone(), self.lr, self.steps)
        return torch.cat([w.detach().double(), b.detach().double().reshape(1)])

    def expected(self, variant):
        variant = variant if isinstance(variant, LogRegVariant) else CORRECT_LR
        if self.kind == "bce":
            return bce_reference(self.a, self.b, variant).reshape(1)
        w, b = fit_reference(self.a, self.b, self.lr, self.steps, variant)
        return torch.cat([w, b.reshape(1)])


HYPOTHESES = (
    ("logreg-gradient-sign", LogRegVariant(direction=1)),
    ("logreg-gradient-sign", LogRegVariant(direction=1, reduce="sum")),
    ("logreg-missing-mean", LogRegVariant(reduce="sum")),
    ("logreg-missing-mean", LogRegVariant(bce_reduce="sum")),
    ("logreg-bias-not-updated", LogRegVariant(bias=False)),
    ("logreg-sigmoid-missing", LogRegVariant(sigmoid=False)),
)


class LogisticRegressionTask:
    name = "logistic_regression"
    forbidden = FORBIDDEN
    builtin_what = Ev("BCE or autograd")
    builtin_code = "logreg-uses-builtin"

    def checks(self, ctx: Context) -> list[CheckDef]:
        n, d = ctx.sizes(600, (37, 90), (3, 9))
        defs = [
            CheckDef("shape.bce-1d", "shape", partial(shape_bce_check, ctx, (13,))),
            CheckDef("shape.bce-2d", "shape", partial(shape_bce_check, ctx, (5, 7))),
            CheckDef("shape.fit", "shape", partial(shape_fit_check, ctx, 23, 4)),
            CheckDef("shape.fit-one-feature", "shape", partial(shape_fit_check, ctx, 11, 1)),
            CheckDef("numerical.bce", "numerical", partial(bce_check, ctx, 0, (29,))),
            CheckDef("numerical.bce-soft-targets", "numerical", partial(bce_check, ctx, 1, (6, 9), True)),
            CheckDef("numerical.bce-float64", "numerical", partial(bce_check, ctx, 2, (3, 5, 7), True, torch.float64)),
            CheckDef("numerical.fit", "numerical", partial(fit_check, ctx, 0, 50, 3)),
            CheckDef("numerical.fit-one-step", "numerical", partial(fit_check, ctx, 1, 31, 6, 0.5, 1)),
            CheckDef("numerical.fit-drawn", "numerical", partial(fit_check, ctx, 2, n, d, 0.1, 40)),
            CheckDef("numerical.fit-float64", "numerical", partial(fit_check, ctx, 3, 45, 7, 1.0, 30, torch.float64)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.fit.{str(dt)[6:]}", "numerical", partial(fit_check, ctx, 4, 50, 3, LR, 10, dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        x, y = classification(ctx, 700, 30, 4, torch.float32)
        z, t = logits_and_targets(ctx, 701, (17,), dtype=torch.float32)
        return defs + [
            CheckDef("gradient.bce-logits", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.zero-feature", "mask-leak", partial(zero_feature_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: (run_fit(ctx, x, y), run_bce(ctx, z, t)),
                             {"x": x, "y": y, "logits": z, "targets": t})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        x, y = classification(ctx, 1100, 19, 3)
        x2, y2 = classification(ctx, 1101, 26, 4)
        z, t = logits_and_targets(ctx, 1102, (11,), soft=True)
        return [Probe("fit", x, y, 0.4, 3), Probe("fit", x2, y2, 0.2, 5), Probe("bce", z, t)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = LogisticRegressionTask()
