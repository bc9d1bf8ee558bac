"""The ``mlp_backward`` task: ``mlp_forward_backward(x, w1, b1, w2, b2, y) -> (loss, dw1, db1, dw2, db2)`` by hand.

``h = relu(x @ w1 + b1)``, ``logits = h @ w2 + b2``, the loss the batch mean of softmax cross-entropy against the
class ids ``y``. The truth is float64 autograd through that forward, run here in the judge; the user's file may not
use autograd (Tensor.backward, torch.autograd.grad, torch.func are refused at run time). :func:`manual` writes the
backward out with a knob for each classic mistake, for the diagnosis. Sizes N, D, H, C never coincide, so a
transposed gradient cannot hide.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

FORBIDDEN = {
    "backward": Ev("autograd (Tensor.backward or torch.autograd.backward)"),  # the rule shows it (battery.rules_check)
    "grad": Ev("autograd (torch.autograd.grad; torch.func.grad, vjp and jacrev call it)"),  # the rule shows it (battery.rules_check)
    "_make_dual": Ev("forward-mode autograd (torch.func.jvp, jacfwd, torch.autograd.forward_ad)"),  # the rule shows it (battery.rules_check)
}  # the user side echoes these back as plain names in rules.builtins ("calls ..."), so no Ev survives the trip
NAMES = ("loss", "dw1", "db1", "dw2", "db2")
BASE = (9, 5, 7, 4)  # N, D, H, C


@dataclass(frozen=True)
class MLPVariant:
    scale: str = "mean"  # mean (correct) | sum: the gradients not divided by N
    onehot: bool = True  # False: dlogits = softmax, the one-hot not subtracted
    relu: str = "pre"  # pre (correct): dh·(z1 > 0) | upstream: dh·(dh > 0) | activation: dh·h
    transposed: bool = False  # True: dw1 = dz1ᵀ x, dw2 = dz2ᵀ h
    bias: str = "sum"  # sum (correct) | mean: averaged over the batch


CORRECT_MLP = MLPVariant()


def autograd_truth(x, w1, b1, w2, b2, y, dtype=torch.float64):
    """(loss, dw1, db1, dw2, db2) by autograd through the forward, in ``dtype``."""
    leaves = [t.detach().clone().to(dtype).requires_grad_() for t in (w1, b1, w2, b2)]
    h = torch.relu(x.to(dtype) @ leaves[0] + leaves[1])
    loss = F.cross_entropy(h @ leaves[2] + leaves[3], y)
    return (loss.detach(), *torch.autograd.grad(loss, leaves))


def manual(x, w1, b1, w2, b2, y, variant: MLPVariant = CORRECT_MLP):
    n = x.shape[0]
    z1 = x @ w1 + b1
    h = torch.relu(z1)
    logits = h @ w2 + b2
    logp = torch.log_softmax(logits, dim=-1)
    loss = -logp[torch.arange(n), y].mean()
    dlogits = logp.exp() - (F.one_hot(y, logits.shape[-1]).to(x.dtype) if variant.onehot else 0)
    dlogits = dlogits / n if variant.scale == "mean" else dlogits
    dh = dlogits @ w2.T
    dz1 = {"pre": dh * (z1 > 0), "upstream": dh * (dh > 0), "activation": dh * h}[variant.relu]
    dw1, dw2 = (dz1.T @ x, dlogits.T @ h) if variant.transposed else (x.T @ dz1, h.T @ dlogits)
    reduce = (lambda g: g.sum(0)) if variant.bias == "sum" else (lambda g: g.mean(0))
    return loss, dw1, reduce(dz1), dw2, reduce(dlogits)


def make_inputs(ctx: Context, sizes, offset: int, dtype=torch.float64, logit_scale: float = 1.0, dead: int = 0):
    """x [N, D], w1 [D, H], b1 [H], w2 [H, C], b2 [C], y [N]; pre-activations of both signs, none near 0."""
    n, d, h, c = sizes
    gen = ctx.generator(offset)
    x = ctx.randn(n, d, gen=gen, dtype=torch.float64)
    w1 = ctx.randn(d, h, gen=gen, dtype=torch.float64) / d**0.5
    b1 = 0.3 * ctx.randn(h, gen=gen, dtype=torch.float64)
    w2 = logit_scale * ctx.randn(h, c, gen=gen, dtype=torch.float64) / h**0.5
    b2 = 0.3 * ctx.randn(c, gen=gen, dtype=torch.float64)
    if dead:
        b1[:dead] = -100.0  # these hidden units never fire
    z1 = x @ w1 + b1
    x = torch.where((z1.abs() < 1e-3).any(-1, keepdim=True), x + 0.01, x)  # keep the ReLU kink away from every sample
    y = torch.randint(0, c, (n,), generator=gen).to(ctx.device)
    return tuple(t.to(dtype) for t in (x, w1, b1, w2, b2)) + (y,)


def run(ctx: Context, inputs):
    ret = ctx.call(ctx.entry, *inputs)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 5 and all(isinstance(t, torch.Tensor) for t in ret)):
        if isinstance(ret, (tuple, list)):
            raise WrongShape(Ev("returned a {type} of {n}, not (loss, dw1, db1, dw2, db2), five tensors", type=type(ret).__name__, n=len(ret)))
        raise WrongShape(Ev("returned {type}, not (loss, dw1, db1, dw2, db2), five tensors", type=type(ret).__name__))
    for name, got, like in zip(NAMES, ret, (torch.zeros(()),) + tuple(inputs[1:5])):
        expect_shape(got, like.shape, Ev("{code}", code=name))
    return ret


def shape_check(ctx: Context, sizes):
    inputs = make_inputs(ctx, sizes, 1, torch.float32)
    for name, got in zip(NAMES, run(ctx, inputs)):
        if got.dtype != torch.float32:
            return outcome("fail", Ev("{name} dtype is {dtype}, the inputs' is float32", name=name, dtype=str(got.dtype)))
    n, d, h, c = sizes
    return outcome("pass", Ev("N={n}, D={d}, H={h}, C={c}: a 0-dim loss and gradients shaped like w1, b1, w2, b2", n=n, d=d, h=h, c=c))


def numerical_check(ctx: Context, sizes, offset: int, dtype=torch.float32):
    inputs = make_inputs(ctx, sizes, 100 + offset)
    truth = autograd_truth(*inputs)
    low = tuple(t.to(dtype) if t.is_floating_point() else t for t in inputs)
    same = autograd_truth(*low, dtype=dtype)
    got = run(ctx, low)
    n, d, h, c = sizes
    what = Ev("N={n}, D={d}, H={h}, C={c}, {dtype}", n=n, d=d, h=h, c=c, dtype=str(dtype)[6:])
    result = against_truth([(Ev("{name} ({what})", name=name, what=what), g, t, s) for name, g, t, s in zip(NAMES, got, truth, same)])
    result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def finite_difference_check(ctx: Context):
    """float64: each returned gradient agrees with central differences of the returned loss."""
    inputs = make_inputs(ctx, BASE, 200)
    got = run(ctx, inputs)
    gen = ctx.generator(201)
    for i, name in enumerate(NAMES[1:], start=1):
        direction = ctx.randn(*inputs[i].shape, gen=gen, dtype=torch.float64)
        eps = 1e-6
        plus = [t.clone() for t in inputs]
        minus = [t.clone() for t in inputs]
        plus[i] += eps * direction
        minus[i] -= eps * direction
        numeric = (run(ctx, plus)[0] - run(ctx, minus)[0]).item() / (2 * eps)
        analytic = (got[i].double() * direction).sum().item()
        if abs(numeric - analytic) > 1e-5 * max(1.0, abs(numeric)):
            return outcome("fail", Ev("{name} disagrees with your own loss: along a random direction the loss changes at "
                                      "{numeric:.6g}, {name} says {analytic:.6g} (float64 central differences)",
                                      name=name, numeric=numeric, analytic=analytic))  # fmt: skip
    return outcome("pass", Ev("every gradient agrees with central differences of the returned loss (float64)"))


def dead_units_check(ctx: Context):
    """float64: hidden units that never fire get exactly zero gradient in w1, b1 and w2."""
    inputs = make_inputs(ctx, BASE, 300, dead=2)
    _, dw1, db1, dw2, _ = run(ctx, inputs)
    for name, g in (("dw1[:, :2]", dw1[:, :2]), ("db1[:2]", db1[:2]), ("dw2[:2]", dw2[:2])):
        if g.abs().max().item() != 0:
            return outcome("fail", Ev("hidden units 0 and 1 never fire (b1 = -100), yet {name} is {size:.3g} in magnitude: "
                                      "the ReLU gradient must be 0 where the pre-activation is negative",
                                      name=name, size=g.abs().max().item()), "mlp-relu-grad-wrong")  # fmt: skip
    return outcome("pass", Ev("units that never fire get exactly zero gradient (float64)"))


def large_logits_check(ctx: Context):
    """float32 logits in the hundreds: a softmax without the max subtracted overflows."""
    inputs = make_inputs(ctx, BASE, 400, logit_scale=300.0)
    truth = autograd_truth(*inputs)
    low = tuple(t.float() if t.is_floating_point() else t for t in inputs)
    got = run(ctx, low)
    for name, g, t in zip(NAMES, got, truth):
        if first_nonfinite(g, t) is not None:
            return outcome("fail", Ev("logits in the hundreds (float32) give a non-finite {name}: exp overflows without the max "
                                      "subtracted", name=name), "mlp-unstable-softmax")  # fmt: skip
    same = autograd_truth(*low, dtype=torch.float32)
    return against_truth([(Ev("{name} at logits in the hundreds (float32)", name=name), g, t, s) for name, g, t, s in zip(NAMES, got, truth, same)])


@dataclass(frozen=True)
class Probe:
    inputs: tuple

    def user(self, ctx: Context):
        ret = ctx.call(ctx.entry, *(t.clone() for t in self.inputs))
        if not (isinstance(ret, (tuple, list)) and len(ret) == 5 and all(isinstance(t, torch.Tensor) for t in ret)):
            return None
        return torch.cat([t.detach().double().reshape(-1) for t in ret])

    def expected(self, variant):
        variant = variant if isinstance(variant, MLPVariant) else CORRECT_MLP
        return torch.cat([t.reshape(-1) for t in manual(*self.inputs, variant)])


HYPOTHESES = (
    ("mlp-missing-mean", MLPVariant(scale="sum")),
    ("mlp-relu-grad-wrong", MLPVariant(relu="upstream")),
    ("mlp-relu-grad-wrong", MLPVariant(relu="activation")),
    ("mlp-transposes-swapped", MLPVariant(transposed=True)),
    ("mlp-softmax-grad-no-onehot", MLPVariant(onehot=False)),
    ("mlp-bias-grad-not-summed", MLPVariant(bias="mean")),
)


class MLPBackwardTask:
    name = "mlp_backward"
    forbidden = FORBIDDEN
    builtin_what = "autograd"
    builtin_code = "mlp-uses-autograd"
    implies = {"mlp-transposes-swapped": {"wrong-output-shape"}}  # dw1 [H, D] for [D, H]: the shape check fails too

    def checks(self, ctx: Context) -> list[CheckDef]:
        drawn = ctx.sizes(500, (11, 40), (3, 9), (10, 33), (2, 8))
        defs = [
            CheckDef("shape.base", "shape", partial(shape_check, ctx, BASE)),
            CheckDef("shape.one-sample", "shape", partial(shape_check, ctx, (1, 3, 6, 5))),
            CheckDef("shape.two-classes", "shape", partial(shape_check, ctx, (8, 6, 3, 2))),
            CheckDef("numerical.seed0", "numerical", partial(numerical_check, ctx, BASE, 0)),
            CheckDef("numerical.seed1", "numerical", partial(numerical_check, ctx, (13, 6, 11, 3), 1)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, drawn, 2)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, (10, 4, 9, 6), 3, torch.float64)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(numerical_check, ctx, BASE, 4, dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        inputs = make_inputs(ctx, BASE, 600, torch.float32)
        return defs + [
            CheckDef("gradient.finite-difference", "gradient", partial(finite_difference_check, ctx)),
            CheckDef("mask-leak.dead-units", "mask-leak", partial(dead_units_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, inputs), dict(zip(("x", "w1", "b1", "w2", "b2", "y"), inputs)))),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(make_inputs(ctx, BASE, 1100)), Probe(make_inputs(ctx, (6, 3, 8, 5), 1101))]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = MLPBackwardTask()
