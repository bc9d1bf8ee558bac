"""The ``adamw`` task: ``adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay)``, in place.

The reference is torch's own AdamW loop (``torch.optim.adam.adam`` with decoupled weight decay, as
``AdamW(foreach=False).step`` runs it), stepped on copies over several steps with the same gradients,
in float64 for the truth and in the user's dtype for the tolerance rule; a resumed case hands it the state after nine steps. The user's tensors come
back as modified inputs (the wire copies an input the call changed back into the judge's tensor),
so an update that rebinds names instead of writing in place changes nothing, and is named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch
from torch.optim.adam import adam

from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

SHAPE = (4, 3)
DEFAULTS = (1e-3, (0.9, 0.999), 1e-8, 1e-2)  # lr, betas, eps, weight_decay
FORBIDDEN = {
    "Adam": "torch.optim.AdamW / torch.optim.Adam",
    "adam": Ev("torch.optim.adam.adam (functional Adam)"),  # the rule shows it (battery.rules_check)
    "adamw": Ev("torch.optim.adamw.adamw (functional AdamW)"),  # the rule shows it (battery.rules_check)
    "_fused_adamw_": "torch._fused_adamw_",
    "_fused_adam_": "torch._fused_adam_",
}
STATE = ("param", "exp_avg", "exp_avg_sq")


@dataclass(frozen=True)
class AdamWVariant:
    bias: str = "both"  # both (correct) | none | m-only | v-only: which moments are bias-corrected
    decay: str = "decoupled"  # decoupled (correct): p *= 1 - lr*wd | l2: grad += wd*p | no-lr: p *= 1 - wd
    eps: str = "outside"  # outside (correct): sqrt(v_hat) + eps | inside: sqrt(v_hat + eps)
    offset: int = 0  # the bias corrections use step + offset


CORRECT_ADAMW = AdamWVariant()


def torch_steps(param, grads, m, v, start, hyper):
    """(param, exp_avg, exp_avg_sq) after each step of torch's AdamW, in the tensors' dtype: the functional
    ``torch.optim.adam.adam`` with ``decoupled_weight_decay=True`` is the loop AdamW.step runs (foreach=False),
    called directly because ``Optimizer.step`` imports torch._dynamo and sympy (about 1.4 s of CPU)."""
    lr, betas, eps, wd = hyper
    p, exp_avg, exp_avg_sq = param.detach().clone(), m.clone(), v.clone()
    step = torch.tensor(float(start - 1))
    out = []
    for g in grads:
        adam([p], [g.clone()], [exp_avg], [exp_avg_sq], [], [step], foreach=False, capturable=False, differentiable=False,
             fused=None, grad_scale=None, found_inf=None, has_complex=False, amsgrad=False, beta1=betas[0], beta2=betas[1],
             lr=lr, weight_decay=wd, eps=eps, maximize=False, decoupled_weight_decay=True)  # fmt: skip
        out.append((p.clone(), exp_avg.clone(), exp_avg_sq.clone()))
    return out


def variant_steps(param, grads, m, v, start, hyper, variant: AdamWVariant):
    lr, (b1, b2), eps, wd = hyper
    p, m, v, out = param.clone(), m.clone(), v.clone(), []
    for k, g in enumerate(grads):
        t = start + k + variant.offset
        if variant.decay == "l2":
            g = g + wd * p
        else:
            p = p * (1 - (lr * wd if variant.decay == "decoupled" else wd))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t) if variant.bias in ("both", "m-only") else m
        v_hat = v / (1 - b2**t) if variant.bias in ("both", "v-only") else v
        denom = v_hat.sqrt() + eps if variant.eps == "outside" else (v_hat + eps).sqrt()
        p = p - lr * m_hat / denom
        out.append((p.clone(), m.clone(), v.clone()))
    return out


def reference(param, grads, m, v, start, hyper, variant: AdamWVariant = CORRECT_ADAMW):
    if variant == CORRECT_ADAMW:
        return torch_steps(param, grads, m, v, start, hyper)
    return variant_steps(param, grads, m, v, start, hyper, variant)


@dataclass(frozen=True)
class Case:
    """A parameter, its gradients for ``len(grads)`` steps from ``start``, and the state before ``start``."""

    param: torch.Tensor
    grads: tuple
    m: torch.Tensor
    v: torch.Tensor
    start: int
    hyper: tuple

    def to(self, dtype) -> Case:
        return Case(self.param.to(dtype), tuple(g.to(dtype) for g in self.grads), self.m.to(dtype), self.v.to(dtype),
                    self.start, self.hyper)  # fmt: skip

    def reference(self, variant=CORRECT_ADAMW):
        return reference(self.param, list(self.grads), self.m, self.v, self.start, self.hyper, variant)


def make_case(ctx: Context, offset: int, hyper=DEFAULTS, steps: int = 5, shape=SHAPE, scale=1.0, start: int = 1,
              dtype=torch.float32) -> Case:  # fmt: skip
    """float64 values cast to ``dtype``; gradients of mixed scales (``scale`` times 0.01 to 1); a resumed
    case (``start`` > 1) begins from torch's own state after ``start - 1`` steps."""
    gen = ctx.generator(offset)
    param = ctx.randn(*shape, gen=gen, dtype=torch.float64)
    spread = torch.logspace(-2, 0, math.prod(shape), dtype=torch.float64)[torch.randperm(math.prod(shape), generator=gen)]
    grads = [scale * spread.reshape(shape).to(ctx.device) * ctx.randn(*shape, gen=gen, dtype=torch.float64) for _ in range(steps)]
    m = v = torch.zeros(shape, dtype=torch.float64, device=ctx.device)
    if start > 1:
        warm = [scale * ctx.randn(*shape, gen=gen, dtype=torch.float64) for _ in range(start - 1)]
        param, m, v = torch_steps(param, warm, m, v, 1, hyper)[-1]
    return Case(param, tuple(grads), m, v, start, hyper).to(dtype)


class Broken(Exception):
    """The call broke the contract (grad changed, nothing updated in place): a finished outcome."""

    def __init__(self, result):
        self.result = result


def run(ctx: Context, case: Case, requires_grad: bool = False):
    """The user's (param, exp_avg, exp_avg_sq) after each step; raises Broken for a changed grad or no update."""
    lr, betas, eps, wd = case.hyper
    p, m, v = case.param.clone(), case.m.clone(), case.v.clone()
    if requires_grad:
        p.requires_grad_()
    out = []
    for k, g in enumerate(case.grads):
        sent, before = g.clone(), (p.detach().clone(), m.clone(), v.clone())
        ctx.call(ctx.entry, p, sent, m, v, case.start + k, lr, betas, eps, wd)
        if not torch.equal(sent, g):
            raise Broken(outcome("fail", Ev("step {step}: grad was modified in place; the update may only "
                                            "change param, exp_avg and exp_avg_sq", step=case.start + k), "mutates-input"))  # fmt: skip
        unchanged = [name for name, t, b in zip(STATE, (p.detach(), m, v), before) if torch.equal(t, b)]
        if unchanged and not g.eq(0).all():
            raise Broken(outcome("fail", Ev("step {step}: {names} unchanged after the call: update "
                                            "the caller's tensors in place (param.add_, exp_avg.mul_(...).add_(...), or .copy_); "
                                            "assigning a new tensor to the name changes nothing outside the function",
                                            step=case.start + k, names=", ".join(unchanged)), "adamw-not-in-place"))  # fmt: skip
        out.append((p.detach().clone(), m.clone(), v.clone()))
    return out


def steps_check(ctx: Context, case: Case, requires_grad: bool = False, what: Ev | None = None):
    truth = case.to(torch.float64).reference()
    same = case.reference()
    try:
        got = run(ctx, case, requires_grad)
    except Broken as exc:
        return exc.result
    except UserCodeError as exc:
        if requires_grad and exc.kind == "user" and "leaf Variable" in str(exc):  # shown as is
            return outcome("error", Ev("{error}; param is an nn.Parameter here: update it under torch.no_grad(), as optimizer.step does",
                                       error=exc.args[0]))  # fmt: skip
        raise
    lr, betas, eps, wd = case.hyper
    config = f"lr={lr:g}, betas={betas}, eps={eps:g}, weight_decay={wd:g}"
    what = what or Ev("{config}, {dtype}", config=config, dtype=str(case.param.dtype)[6:])
    for k, (g, t, s) in enumerate(zip(got, truth, same)):
        result = against_truth([(Ev("step {step}: {name}", step=case.start + k, name=name), gv, tv, sv)
                                for name, gv, tv, sv in zip(STATE, g, t, s)])  # fmt: skip
        if result.status != "pass":
            result.message = Ev("{label}: {what}", label=what, what=result.message)
            return result
    result.message = Ev("{what}, steps {first} to {last}: {result}", what=what, first=case.start, last=case.start + len(got) - 1,
                        result=result.message)  # fmt: skip
    return result


def drawn_check(ctx: Context):
    """A 3-D parameter, the number of steps, the step it resumes from and lr, betas, weight_decay, all drawn."""
    a, b, c, steps, start = ctx.sizes(320, (1, 6), (1, 6), (1, 6), (2, 5), (1, 60))
    u = torch.rand(4, generator=ctx.generator(321), dtype=torch.float64).tolist()
    lr, wd = round(10 ** (-3 + 2 * u[0]), 4), round(0.2 * u[3], 3)  # lr from 1e-3 to 0.1
    betas = (round(0.8 + 0.15 * u[1], 3), round(0.95 + 0.049 * u[2], 3))
    case = make_case(ctx, 322, (lr, betas, 1e-8, wd), steps, (a, b, c), start=start)
    what = Ev("{config} (drawn from the seed), {dtype}", config=f"shape=[{a}, {b}, {c}], lr={lr:g}, betas={betas}, weight_decay={wd:g}",
              dtype="float32")  # fmt: skip
    return steps_check(ctx, case, what=what)


def elementwise_check(ctx: Context):
    """float64: AdamW is elementwise; a change to grad[i] may move param[i], exp_avg[i], exp_avg_sq[i] only."""
    case = make_case(ctx, 300, (0.1, (0.9, 0.99), 1e-8, 0.1), 1, (2, 3), dtype=torch.float64)
    try:
        (base,) = run(ctx, case)
        for i in range(case.param.numel()):
            g = case.grads[0].clone()
            g.view(-1)[i] += 2.0
            (moved,) = run(ctx, Case(case.param, (g,), case.m, case.v, case.start, case.hyper))
            for name, new, old in zip(STATE, moved, base):
                change = (new - old).abs().reshape(-1).nan_to_num(nan=float("inf"))
                change[i] = 0.0
                if (change > LEAK_THRESHOLD).any():
                    j = int((change > LEAK_THRESHOLD).nonzero()[0])
                    return outcome("fail", Ev("changing grad element {i} moved {name} element {j} by {change:.3g} (float64): "
                                              "each element's update depends on its own gradient and state alone",
                                              i=i, name=name, j=j, change=change[j].item()))  # fmt: skip
    except Broken as exc:
        return exc.result
    return outcome("pass", Ev("each of the {n} elements updates from its own gradient and state alone (float64)", n=case.param.numel()))


def zero_grad_check(ctx: Context):
    """A zero gradient at step 1: m = v = 0, the Adam part is 0 / (0 + eps) = 0 and only the decay moves param."""
    case = make_case(ctx, 400, (0.1, (0.9, 0.999), 1e-8, 0.1), 2)
    case = Case(case.param, tuple(torch.zeros_like(g) for g in case.grads), case.m, case.v, 1, case.hyper)
    return steps_check(ctx, case, what=Ev("zero gradients (lr=0.1, weight_decay=0.1)"))


def grad_unchanged_check(ctx: Context):
    case = make_case(ctx, 500, (0.1, (0.9, 0.99), 1e-8, 0.1), 3)
    try:
        run(ctx, case)
    except Broken as exc:
        return exc.result
    return outcome("pass", Ev("grad unchanged by each of 3 calls, bit for bit"))


@dataclass(frozen=True)
class Probe:
    """float64, large lr, decay and eps: every variant moves param by far more than the grader's 1e-3."""

    case: Case

    def user(self, ctx: Context):
        try:
            out = run(ctx, self.case)
        except Broken:
            return None
        return torch.cat([t.reshape(-1) for t in out[-1]])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct AdamW" here.
        variant = variant if isinstance(variant, AdamWVariant) else CORRECT_ADAMW
        return torch.cat([t.reshape(-1) for t in self.case.reference(variant)[-1]])


HYPOTHESES = (
    ("adamw-no-bias-correction", AdamWVariant(bias="none")),
    ("adamw-no-bias-correction", AdamWVariant(bias="m-only")),
    ("adamw-no-bias-correction", AdamWVariant(bias="v-only")),
    ("adamw-l2-not-decoupled", AdamWVariant(decay="l2")),
    ("adamw-decay-without-lr", AdamWVariant(decay="no-lr")),
    ("adamw-eps-inside-sqrt", AdamWVariant(eps="inside")),
    ("adamw-step-off-by-one", AdamWVariant(offset=1)),
    ("adamw-step-off-by-one", AdamWVariant(offset=-1)),
)


class AdamWTask:
    name = "adamw"
    forbidden = FORBIDDEN
    builtin_what = Ev("optimizer (Adam / AdamW)")
    builtin_code = "uses-builtin-adamw"

    def checks(self, ctx: Context) -> list[CheckDef]:
        big = (0.1, (0.8, 0.99), 1e-8, 0.1)
        case = partial(make_case, ctx)
        defs = [
            CheckDef("shape.in-place", "shape", partial(steps_check, ctx, case(0, steps=1), what=Ev("one step, float32 [4, 3]"))),
            CheckDef("shape.1d", "shape", partial(steps_check, ctx, case(1, steps=2, shape=(7,)), what=Ev("two steps, float32 [7]"))),
            CheckDef("numerical.defaults", "numerical", partial(steps_check, ctx, case(2))),
            CheckDef("numerical.lr-0.1-decay-0.1", "numerical", partial(steps_check, ctx, case(3, big))),
            CheckDef("numerical.eps-1e-3", "numerical", partial(steps_check, ctx, case(4, (0.01, (0.9, 0.999), 1e-3, 0.0), scale=1e-3))),
            CheckDef("numerical.no-decay", "numerical", partial(steps_check, ctx, case(5, (0.01, (0.9, 0.999), 1e-8, 0.0)))),
            CheckDef("numerical.resume-step-10", "numerical", partial(steps_check, ctx, case(6, big, 3, start=10))),
            CheckDef("numerical.float64", "numerical", partial(steps_check, ctx, case(7, (0.05, (0.9, 0.95), 1e-6, 0.2), 4, dtype=torch.float64))),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(steps_check, ctx, case(8, big, 3, dtype=dt)))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("gradient.param-requires-grad", "gradient", partial(steps_check, ctx, case(9, big, 2), True,
                     Ev("param a leaf that requires grad (an nn.Parameter), two steps"))),  # fmt: skip
            CheckDef("mask-leak.elementwise", "mask-leak", partial(elementwise_check, ctx)),
            CheckDef("stability.zero-grad", "stability", partial(zero_grad_check, ctx)),
            CheckDef("stability.grad-scales", "stability", partial(steps_check, ctx, case(10, scale=1e6, steps=3),
                     what=Ev("gradients from 1e4 to 1e6 and their squares (float32)"))),  # fmt: skip
            CheckDef("stability.tiny-grads", "stability", partial(steps_check, ctx, case(11, scale=1e-6, steps=3),
                     what=Ev("gradients from 1e-8 to 1e-6, near eps (float32)"))),  # fmt: skip
            CheckDef("robustness.grad-unchanged", "robustness", partial(grad_unchanged_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        hyper = (0.1, (0.8, 0.95), 1e-2, 0.2)
        return [
            Probe(make_case(ctx, 1100, hyper, 3, (3, 4), 0.3, dtype=torch.float64)),
            Probe(make_case(ctx, 1101, hyper, 3, (5,), 0.3, start=4, dtype=torch.float64)),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = AdamWTask()
