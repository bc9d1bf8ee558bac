"""The ``batchnorm`` task: ``BatchNorm(num_features, eps=1e-5, momentum=0.1)``, torch's BatchNorm1d semantics by hand.

Train mode normalises each channel with the batch's mean and biased variance (over N, and L for ``[N, C, L]``)
and moves the running estimates by torch's convention, ``running = (1 - momentum)·running + momentum·batch``,
the variance's unbiased; eval mode normalises with the running estimates and changes nothing. The reference
is ``F.batch_norm`` in float64 (and in the user's dtype for the tolerance rule) on copies of the running
buffers, with the user's own weight and bias, which each check sets to non-trivial values first.
``F.batch_norm`` and ``nn.BatchNorm*`` are refused at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial, reduce

import torch
import torch.nn.functional as F

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.raised import raising_source
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError, UserModule
from drill.text.messages import Ev

FORBIDDEN = {
    "batch_norm": "F.batch_norm / nn.BatchNorm1d",
    "native_batch_norm": "torch.ops.aten.native_batch_norm",
    "_native_batch_norm_legit": "torch.ops.aten._native_batch_norm_legit",
    "_batch_norm_impl_index": "torch.ops.aten._batch_norm_impl_index",
    "instance_norm": "F.instance_norm",
}
BUFFERS = ("running_mean", "running_var")
TRAIN, EVAL = Ev("train"), Ev("eval")


@dataclass(frozen=True)
class BNVariant:
    dims: str = "channel"  # channel (correct): over N (and L) | no-length: over N only | sample: over C (and L), per sample
    norm_var: str = "biased"  # biased (correct) | unbiased: the unbiased variance in the normalisation
    running_var: str = "unbiased"  # unbiased (correct) | biased: the biased variance into the running estimate
    momentum: str = "torch"  # torch (correct): (1 - m)·running + m·batch | inverted: m·running + (1 - m)·batch
    eval_stats: str = "running"  # running (correct) | batch: eval normalises with the batch's statistics
    update_in_eval: bool = False  # True: the running estimates move in eval too


CORRECT_BN = BNVariant()


class Reference:
    """A float64 (or same-precision) batch norm with its own running buffers, following a variant."""

    def __init__(self, weight, bias, c: int, dtype, eps=1e-5, momentum=0.1, variant: BNVariant = CORRECT_BN, device="cpu"):
        self.w, self.b, self.eps, self.m, self.v = weight.to(dtype), bias.to(dtype), eps, momentum, variant
        self.mean = torch.zeros(c, dtype=dtype, device=device)
        self.var = torch.ones(c, dtype=dtype, device=device)

    def __call__(self, x, training: bool):
        v, x = self.v, x.to(self.w.dtype)
        if v == CORRECT_BN:
            return F.batch_norm(x, self.mean, self.var, self.w, self.b, training, self.m, self.eps)
        batch = training or v.eval_stats == "batch"
        if v.dims == "channel" or not batch:
            dims = (0,) if x.dim() == 2 else (0, 2)
        else:
            dims = {"no-length": (0,), "sample": tuple(range(1, x.dim()))}[v.dims]
        shape = (1, -1) + (1,) * (x.dim() - 2)
        if batch:
            mean = x.mean(dims, keepdim=True)
            var = x.var(dims, unbiased=v.norm_var == "unbiased", keepdim=True)
        else:
            mean, var = self.mean.reshape(shape), self.var.reshape(shape)
        y = (x - mean) / torch.sqrt(var + self.eps) * self.w.reshape(shape) + self.b.reshape(shape)
        if (training or v.update_in_eval) and v.dims == "channel":
            channel = (0,) if x.dim() == 2 else (0, 2)
            bm, bv = x.mean(channel), x.var(channel, unbiased=v.running_var == "unbiased")
            m = self.m if v.momentum == "torch" else 1 - self.m
            self.mean, self.var = (1 - m) * self.mean + m * bm, (1 - m) * self.var + m * bv
        elif training or v.update_in_eval:  # the statistics' own shape is not [C]: what follows is not predicted
            self.mean, self.var = torch.full_like(self.mean, float("nan")), torch.full_like(self.var, float("nan"))
            y = y if training else torch.full_like(y, float("nan"))
        if not training and v.dims != "channel":
            y = torch.full_like(y, float("nan"))
        return y


def both(names: list[str]) -> Ev:
    """``a and b``: code names as each language joins them."""
    return reduce(lambda a, b: Ev("{a} and {b}", a=a, b=Ev("{code}", code=b)), names[1:], Ev("{code}", code=names[0]))


def either(names: list[str]) -> Ev:
    """``a or b``: code names as each language joins them."""
    return reduce(lambda a, b: Ev("{a} or {b}", a=a, b=Ev("{code}", code=b)), names[1:], Ev("{code}", code=names[0]))


def listed(parts: list[Ev]) -> Ev:
    """``a, b``, or ``none``."""
    return Ev.seq(parts, ", ") if parts else Ev("none")


def build(ctx: Context, c: int, dtype, offset: int, **kwargs) -> tuple[UserModule, torch.Tensor, torch.Tensor]:
    """The user's BatchNorm(c, **kwargs) with weight 1 + 0.5·N(0, 1) and bias 0.5·N(0, 1) (float64 copies returned)."""
    module = ctx.user.instantiate(ctx.entry, (c,), seed=ctx.seed, device=ctx.device, dtype=dtype, kwargs=kwargs)
    names = dict(module.named_parameters())
    missing = [n for n in ("weight", "bias") if n not in names or tuple(names[n].shape) != (c,)]
    if missing:
        found = listed([Ev("{name} {shape}", name=n, shape=list(p.shape)) for n, p in names.items()])
        raise WrongShape(Ev("BatchNorm({c}) has no parameter {missing} of shape [{c}] (its parameters: {found})", c=c, missing=either(missing),
                            found=found))  # fmt: skip
    weight, bias = affine(ctx, c, offset)
    ctx.user.assign(module, {"weight": weight.to(dtype), "bias": bias.to(dtype)})
    return module, weight, bias


def affine(ctx: Context, c: int, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    """float64 weight 1 + 0.5·N(0, 1) and bias 0.5·N(0, 1), so a missing affine step shows."""
    gen = ctx.generator(offset)
    return 1 + 0.5 * ctx.randn(c, gen=gen, dtype=torch.float64), 0.5 * ctx.randn(c, gen=gen, dtype=torch.float64)


def set_mode(ctx: Context, module: UserModule, training: bool) -> None:
    ctx.call(ctx.user.attribute(module, "train"), training, watch=False)


def buffers(ctx: Context, module: UserModule, c: int) -> list[torch.Tensor]:
    found = []
    for name in BUFFERS:
        t = ctx.user.attribute(module, name)
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != (c,):
            if isinstance(t, torch.Tensor):
                raise WrongShape(Ev("{name} is {shape}, expected a buffer of shape [{c}]", name=name, shape=list(t.shape), c=c))
            raise WrongShape(Ev("{name} is {type}, expected a buffer of shape [{c}]", name=name, type=type(t).__name__, c=c))
        found.append(t.detach().clone())
    return found


def forward(ctx: Context, module: UserModule, x):
    out = tensor_result(ctx.call(module, x))
    problem = expect_like(out, x.shape, x)
    if problem:
        raise WrongShape(problem)
    return out


def make_x(ctx: Context, shape, offset: int, dtype=torch.float64, loc: float = 0.0):
    """Per-channel means and scales that differ, so a statistic over the wrong dims shows."""
    gen = ctx.generator(offset)
    c = shape[1]
    view = (1, c) + (1,) * (len(shape) - 2)
    centre = loc + 2 * ctx.randn(c, gen=gen, dtype=torch.float64).reshape(view)
    scale = (0.5 + 2 * torch.rand(c, generator=gen, dtype=torch.float64)).to(ctx.device).reshape(view)
    return (centre + scale * ctx.randn(*shape, gen=gen, dtype=torch.float64)).to(dtype)


def state_check(ctx: Context):
    """Parameters weight/bias and buffers running_mean/running_var as torch names them, initialised as torch does."""
    c = 7
    module = ctx.user.instantiate(ctx.entry, (c,), seed=ctx.seed, device=ctx.device, dtype=torch.float32)
    names = dict(module.named_parameters())
    for name, value in (("weight", 1.0), ("bias", 0.0)):
        if name not in names or tuple(names[name].shape) != (c,):
            found = listed([Ev("{code}", code=n) for n in names])
            return outcome("fail", Ev("no parameter {name} of shape [{c}] (parameters: {found})", name=name, c=c, found=found))
        if not torch.equal(names[name].detach(), torch.full((c,), value, device=names[name].device)):
            return outcome("fail", Ev("{name} starts at {values}..., torch starts it at {value:g}", name=name,
                                      values=names[name].detach().tolist()[:3], value=value))  # fmt: skip
    for name, value in zip(BUFFERS, buffers(ctx, module, c)):
        expected = 0.0 if name == "running_mean" else 1.0
        if not torch.equal(value, torch.full_like(value, expected)):
            return outcome("fail", Ev("{name} starts at {values}..., torch starts it at {value:g}", name=name, values=value.tolist()[:3],
                                      value=expected))  # fmt: skip
    return outcome("pass", Ev("weight 1, bias 0 (parameters), running_mean 0, running_var 1 (buffers), each [C]"))


def shape_check(ctx: Context, shape):
    module, _, _ = build(ctx, shape[1], torch.float32, 1)
    for training in (True, False):
        set_mode(ctx, module, training)
        forward(ctx, module, make_x(ctx, shape, 1, torch.float32))
    return outcome("pass", Ev("x {shape}: the output has x's shape, dtype and device in train and eval mode", shape=list(shape)))


def running_update_check(ctx: Context, flat=(6, 5), shape=(4, 3, 7)):
    """Statistics over N alone are [C, L] for [N, C, L]: the [C] running buffers cannot take them, so the training
    call raises at the update, which no output can show. Named only when [N, C] trains and the line that raised
    updates a buffer; any other exception is the user's to read, as every check reports it."""
    try:
        module, _, _ = build(ctx, shape[1], torch.float32, 7)
        set_mode(ctx, module, True)
        forward(ctx, module, make_x(ctx, shape, 7, torch.float32))
    except UserCodeError as exc:
        source = raising_source(str(exc), ctx.path)
        updated = [name for name in BUFFERS if name in source]
        if not updated:
            raise
        module, _, _ = build(ctx, flat[1], torch.float32, 8)
        set_mode(ctx, module, True)
        forward(ctx, module, make_x(ctx, flat, 8, torch.float32))  # raises too: not a matter of the dims
        return outcome("fail", Ev("x {shape} in training raises where it updates {names}, and x {flat} does not: the batch statistics of "
                                  "[N, C, L] do not have the buffers' shape [C] (over N alone they are [C, L]); BatchNorm takes one per "
                                  "channel, over N and L", shape=list(shape), names=both(updated), flat=list(flat)),
                       "bn-wrong-dims")  # fmt: skip
    return outcome("pass", Ev("x {shape} in training: the running buffers take the batch statistics", shape=list(shape)))


def sequence_check(ctx: Context, shape, offset: int, dtype=torch.float32, calls=(True, True, False), **kwargs):
    """Train and eval calls in a row on one module: every output and the running buffers after each call."""
    c = shape[1]
    module, weight, bias = build(ctx, c, dtype, offset, **kwargs)
    truth = Reference(weight, bias, c, torch.float64, device=ctx.device, **kwargs)
    same = Reference(weight, bias, c, dtype, device=ctx.device, **kwargs)
    pairs = []
    for i, training in enumerate(calls):
        x = make_x(ctx, shape, offset * 10 + i)
        set_mode(ctx, module, training)
        mode = TRAIN if training else EVAL
        pairs.append((Ev("output of call {i} ({mode})", i=i + 1, mode=mode), forward(ctx, module, x.to(dtype)), truth(x, training),
                      same(x, training)))  # fmt: skip
        for name, got, t, s in zip(BUFFERS, buffers(ctx, module, c), (truth.mean, truth.var), (same.mean, same.var)):
            # F.batch_norm moves them in place
            pairs.append((Ev("{name} after call {i} ({mode})", name=name, i=i + 1, mode=mode), got, t.clone(), s.clone()))
    modes = [TRAIN if t else EVAL for t in calls]
    order = reduce(lambda a, b: Ev("{a} then {b}", a=a, b=b), modes[1:], modes[0])
    settings = [Ev("{code}", code=", ".join(f"{k}={v}" for k, v in kwargs.items()))] if kwargs else []
    what = Ev.seq([Ev("x {shape}", shape=list(shape)), order, str(dtype)[6:], *settings], ", ")
    result = against_truth(pairs)
    result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context):
    """Train mode, float32: dx, d weight and d bias against autograd through F.batch_norm (the batch statistics included)."""
    shape = (6, 5, 7)
    module, weight, bias = build(ctx, shape[1], torch.float32, 40)
    set_mode(ctx, module, True)
    x = make_x(ctx, shape, 40)
    leaf = x.float().requires_grad_()
    out = forward(ctx, module, leaf)
    seed = ctx.randn(*shape, gen=ctx.generator(201), dtype=torch.float64)
    params = dict(module.named_parameters())
    ctx.call(lambda: (out * seed.float()).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        xs, ws, bs = (t.detach().clone().to(precision).requires_grad_() for t in (x, weight, bias))
        stats = (torch.zeros(shape[1], dtype=precision, device=xs.device), torch.ones(shape[1], dtype=precision, device=xs.device))
        y = F.batch_norm(xs, *stats, ws, bs, True, 0.1, 1e-5)
        (y * seed.to(precision)).sum().backward()
        grads[precision] = (xs.grad, ws.grad, bs.grad)
    pairs = []
    for name, got, exact, same in zip(("dx", "dweight", "dbias"), (leaf.grad, params["weight"].grad, params["bias"].grad),
                                      grads[torch.float64], grads[torch.float32]):  # fmt: skip
        if got is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name[1:]))
        pairs.append((name, got, exact, same))
    return against_truth(pairs)


def channel_leak_check(ctx: Context):
    """float64, train: changing channel c's inputs moves channel c's outputs only (statistics per channel)."""
    shape = (5, 4, 6)
    module, _, _ = build(ctx, shape[1], torch.float64, 50)
    set_mode(ctx, module, True)
    x = make_x(ctx, shape, 50)
    base = forward(ctx, module, x.clone())
    for c in range(shape[1]):
        moved = x.clone()
        moved[:, c] = 3 * moved[:, c] + 1.5
        change = (forward(ctx, module, moved) - base).abs().nan_to_num(nan=float("inf")).amax(dim=(0, 2))
        change[c] = 0
        if (change > LEAK_THRESHOLD).any():
            other = int((change > LEAK_THRESHOLD).nonzero()[0])
            return outcome("fail", Ev("changing channel {c}'s inputs moved channel {other}'s outputs by {change:.3g} (float64, train): "
                                      "the statistics mix channels", c=c, other=other, change=change[other].item()),
                           "bn-wrong-dims")  # fmt: skip
    return outcome("pass", Ev("each of the {n} channels is normalised from its own inputs alone (float64, train)", n=shape[1]))


def eval_leak_check(ctx: Context):
    """float64, eval (two modules trained alike): each sample's output depends on that sample alone."""
    shape = (6, 5)
    x = make_x(ctx, shape, 62)
    moved = x.clone()
    moved[0] = 10 * moved[0] + 4
    outs = []
    for batch in (x, moved):  # a fresh module each, so an eval call that updates the buffers changes nothing here
        module, _, _ = build(ctx, shape[1], torch.float64, 60)
        set_mode(ctx, module, True)
        for i in range(2):
            forward(ctx, module, make_x(ctx, shape, 60 + i))
        set_mode(ctx, module, False)
        outs.append(forward(ctx, module, batch.clone()))
    change = (outs[1] - outs[0]).abs().nan_to_num(nan=float("inf"))[1:].max().item()
    if change > LEAK_THRESHOLD:
        return outcome("fail", Ev("in eval, changing sample 0 moved the other samples' outputs by {change:.3g}: eval normalises with the "
                                  "batch's statistics, not the running ones", change=change), "bn-eval-batch-stats")  # fmt: skip
    return outcome("pass", Ev("in eval each sample is normalised on its own (float64)"))


def eval_state_check(ctx: Context):
    """An eval call leaves running_mean and running_var exactly as they were."""
    shape = (8, 3, 5)
    module, _, _ = build(ctx, shape[1], torch.float32, 70)
    set_mode(ctx, module, True)
    forward(ctx, module, make_x(ctx, shape, 70, torch.float32))
    before = buffers(ctx, module, shape[1])
    set_mode(ctx, module, False)
    forward(ctx, module, make_x(ctx, shape, 71, torch.float32, loc=3.0))
    after = buffers(ctx, module, shape[1])
    changed = [name for name, b, a in zip(BUFFERS, before, after) if not torch.equal(b, a)]
    if changed:
        return outcome("fail", Ev("an eval call changed {names}", names=both(changed)), "bn-running-stats-in-eval")
    return outcome("pass", Ev("an eval call leaves the running buffers unchanged"))


def two_pass(x, weight, bias, eps=1e-5):
    """Train-mode batch norm of ``[N, C, L]`` as a careful hand-written one computes it: the mean first, then the
    mean square of x - mean."""
    mean = x.mean(dim=(0, 2), keepdim=True)
    var = ((x - mean) ** 2).mean(dim=(0, 2), keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight.reshape(1, -1, 1) + bias.reshape(1, -1, 1)


def large_offset_check(ctx: Context):
    """float32 channels around 1e4 with a spread of ~1: E[x²] - E[x]² cancels catastrophically. The bug is named only
    when the same module is right on the same data moved back to 0."""
    shape = (16, 4, 9)
    x = make_x(ctx, shape, 80, loc=1e4).float().double()  # the float32 input exactly: its rounding is no one's error
    centre = x.mean().round()

    def verdict(batch, label):
        module, weight, bias = build(ctx, shape[1], torch.float32, 80)
        set_mode(ctx, module, True)
        truth = Reference(weight, bias, shape[1], torch.float64, device=ctx.device)(batch, True)
        same = two_pass(batch.float(), weight.float(), bias.float())  # torch's kernel accumulates more precisely than a hand-written one can
        out = forward(ctx, module, batch.float())
        if first_nonfinite(out, truth) is not None:
            return outcome("fail", Ev("{label} give NaN or inf: a negative variance from E[x²] - E[x]²?", label=label))
        return against_truth([(Ev("output for {label}", label=label), out, truth, same)])

    result = verdict(x, Ev("inputs around 1e4 with a spread of ~1 (float32)"))
    if result.status != "pass" and verdict(x - centre, Ev("the same inputs moved to 0")).status == "pass":
        result.codes.append("bn-variance-cancellation")
    return result


@dataclass(frozen=True)
class Probe:
    """Train, train, eval on one float64 module: the three outputs and the running buffers at the end."""

    xs: tuple
    calls: tuple
    offset: int
    weight: torch.Tensor
    bias: torch.Tensor

    def user(self, ctx: Context):
        c = self.xs[0].shape[1]
        module, _, _ = build(ctx, c, torch.float64, self.offset)
        parts = []
        for x, training in zip(self.xs, self.calls):
            set_mode(ctx, module, training)
            parts.append(forward(ctx, module, x.clone()).detach().reshape(-1))
        parts += [b.reshape(-1) for b in buffers(ctx, module, c)]
        return torch.cat(parts).double()

    def expected(self, variant):
        variant = variant if isinstance(variant, BNVariant) else CORRECT_BN
        ref = Reference(self.weight, self.bias, self.xs[0].shape[1], torch.float64, variant=variant, device=self.weight.device)
        parts = [ref(x, training).reshape(-1) for x, training in zip(self.xs, self.calls)]
        return torch.cat(parts + [ref.mean, ref.var])


HYPOTHESES = (
    ("bn-wrong-dims", BNVariant(dims="no-length")),
    ("bn-wrong-dims", BNVariant(dims="sample")),
    ("bn-unbiased-normalisation", BNVariant(norm_var="unbiased")),
    ("bn-running-var-biased", BNVariant(running_var="biased")),
    ("bn-momentum-inverted", BNVariant(momentum="inverted")),
    ("bn-eval-batch-stats", BNVariant(eval_stats="batch")),
    ("bn-running-stats-in-eval", BNVariant(update_in_eval=True)),
)


class BatchNormTask:
    name = "batchnorm"
    forbidden = FORBIDDEN
    builtin_what = Ev("batch norm")
    builtin_code = "uses-builtin-batchnorm"

    def checks(self, ctx: Context) -> list[CheckDef]:
        n, c, length = ctx.sizes(90, (5, 12), (3, 9), (2, 11))
        defs = [
            CheckDef("load.state", "shape", partial(state_check, ctx)),
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (6, 5))),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, (4, 3, 7))),
            CheckDef("shape.batch-2", "shape", partial(shape_check, ctx, (2, 9, 1))),
            CheckDef("shape.3d-running-stats", "shape", partial(running_update_check, ctx)),
        ]
        for dtype in ctx.dtypes:
            defs += [
                CheckDef(dtype_id("numerical.train-eval-2d", dtype), "numerical", partial(sequence_check, ctx, (9, 5), 1, dtype)),
                CheckDef(dtype_id("numerical.train-eval-3d", dtype), "numerical", partial(sequence_check, ctx, (6, 4, 7), 2, dtype)),
            ]
        defs += [
            CheckDef("numerical.momentum-0.3-eps-1e-3", "numerical",
                     partial(sequence_check, ctx, (7, 6, 3), 3, momentum=0.3, eps=1e-3)),  # fmt: skip
            CheckDef("numerical.three-train-calls", "numerical", partial(sequence_check, ctx, (5, 3), 4, calls=(True, True, True))),
            CheckDef("numerical.drawn", "numerical", partial(sequence_check, ctx, (n, c, length), 5)),
            CheckDef("numerical.float64", "numerical", partial(sequence_check, ctx, (11, 6, 2), 6, torch.float64, momentum=0.2)),
            CheckDef("gradient.x-and-params", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.channels", "mask-leak", partial(channel_leak_check, ctx)),
            CheckDef("mask-leak.eval-samples", "mask-leak", partial(eval_leak_check, ctx)),
            CheckDef("stability.large-offset", "stability", partial(large_offset_check, ctx)),
            CheckDef("robustness.eval-keeps-running-stats", "robustness", partial(eval_state_check, ctx)),
        ]
        x = make_x(ctx, (6, 4, 5), 95, torch.float32)

        def train_call():
            module, _, _ = build(ctx, 4, torch.float32, 95)
            set_mode(ctx, module, True)
            return forward(ctx, module, x)

        return defs + [CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx, train_call, {"x": x}))]

    def probes(self, ctx: Context) -> list[Probe]:
        found = []
        for shape, offset in (((6, 4, 5), 1100), ((7, 3), 1101)):
            xs = tuple(make_x(ctx, shape, offset * 10 + i) for i in range(3))
            found.append(Probe(xs, (True, True, False), offset, *affine(ctx, shape[1], offset)))
        return found

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = BatchNormTask()
