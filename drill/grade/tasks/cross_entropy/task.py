"""The ``cross_entropy`` task: ``cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0)``.

The reference is torch's own ``F.cross_entropy`` (mean reduction): per non-ignored row
``(1 - ε)·(-log p[target]) + ε·mean_c(-log p[c])``, averaged over the non-ignored rows. Writing the
log-softmax through log-sum-exp is part of the task (``torch.logsumexp`` and ``log_softmax`` are
allowed): the large-logits check sees ``exp`` overflow and ``log(softmax)`` underflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev

N, C = 9, 5
BTC = (2, 4, 7)
LOSS = Ev("loss")

FORBIDDEN = {
    "cross_entropy": "F.cross_entropy / nn.CrossEntropyLoss",
    "nll_loss": "F.nll_loss / nn.NLLLoss",
    "cross_entropy_loss": "torch._C._nn.cross_entropy_loss",
    "nll_loss_forward": "torch.ops.aten.nll_loss_forward",
    "nll_loss2d_forward": "torch.ops.aten.nll_loss2d_forward",
    "nll_loss_nd": "torch.ops.aten.nll_loss_nd",
}


@dataclass(frozen=True)
class CrossEntropyVariant:
    divisor: str = "valid"  # valid (correct) | all: every row, ignored ones too | sum: no mean at all
    ignored: str = "skip"  # skip (correct) | class0: ignored rows scored as class 0 (targets clamped)
    smoothing: str = "uniform"  # uniform: ε/C on every class | others: ε/(C-1) off the target | unnormalised: ε/C off the target only
    smooth_rows: str = "valid"  # valid (correct) | all: the smoothing term of ignored rows counted too
    class_dim: int = -1  # -2: over the rows; 0 or 1: a fixed axis, right for [N, C] logits only (dim=1), or never


CORRECT_CE = CrossEntropyVariant()


def reference(logits, targets, ignore_index=-100, label_smoothing=0.0, variant: CrossEntropyVariant = CORRECT_CE):
    if variant == CORRECT_CE:
        flat = logits.reshape(-1, logits.shape[-1])
        return F.cross_entropy(flat, targets.reshape(-1), ignore_index=ignore_index, label_smoothing=label_smoothing)
    logp = torch.log_softmax(logits, dim=variant.class_dim).reshape(-1, logits.shape[-1])
    t = targets.reshape(-1)
    valid = t != ignore_index
    picked = torch.where(valid, t, 0)
    nll = -logp.gather(-1, picked[:, None]).squeeze(-1)
    eps, c = label_smoothing, logits.shape[-1]
    total = -logp.sum(dim=-1)
    smooth = {"uniform": total / c, "others": (total - nll) / (c - 1), "unnormalised": (total - nll) / c}[variant.smoothing]
    rows = torch.ones_like(valid) if variant.ignored == "class0" else valid
    smooth_rows = torch.ones_like(valid) if variant.smooth_rows == "all" else rows
    loss = ((1 - eps) * nll * rows).sum() + (eps * smooth * smooth_rows).sum()
    count = {"valid": rows.sum(), "all": torch.tensor(len(t)), "sum": torch.tensor(1)}[variant.divisor]
    return loss / count


def make_inputs(ctx: Context, shape, offset: int, n_ignored: int = 0, ignore_index: int = -100, dtype=torch.float64):
    gen = ctx.generator(offset)
    logits = 2 * ctx.randn(*shape, gen=gen, dtype=dtype)
    targets = torch.randint(0, shape[-1], shape[:-1], generator=gen)
    if ignore_index >= 0:
        targets = torch.where(targets == ignore_index, (ignore_index + 1) % shape[-1], targets)
    flat = targets.reshape(-1)
    flat[torch.randperm(flat.numel(), generator=gen)[:n_ignored]] = ignore_index
    return logits, targets.to(ctx.device)


def run(ctx: Context, logits, targets, **kwargs):
    out = tensor_result(ctx.call(ctx.entry, logits, targets, **kwargs), LOSS)
    expect_shape(out, (), LOSS)
    return out


def shape_check(ctx: Context, shape, non_contiguous):
    logits, targets = make_inputs(ctx, shape, 1, dtype=torch.float32)
    if non_contiguous:
        logits = logits.transpose(0, 1).contiguous().transpose(0, 1)
    out = run(ctx, logits, targets)
    if out.dtype != logits.dtype:
        return outcome("fail", Ev("loss dtype is {dtype}, the logits' is {expected}", dtype=str(out.dtype), expected=str(logits.dtype)))
    if out.device != logits.device:
        return outcome("fail", Ev("loss is on {device}, the logits are on {expected}", device=str(out.device), expected=str(logits.device)))
    return outcome("pass", Ev("a 0-dim loss from logits {shape}", shape=list(shape)))


def numerical_check(ctx: Context, shape, offset: int, n_ignored: int = 0, dtype=torch.float32, **kwargs):
    logits, targets = make_inputs(ctx, shape, 100 + offset, n_ignored, kwargs.get("ignore_index", -100))
    truth = reference(logits, targets, **kwargs)
    same = reference(logits.to(dtype), targets, **kwargs)
    out = run(ctx, logits.to(dtype), targets.clone(), **kwargs)
    parts = [Ev("logits {shape}", shape=list(shape))] + ([Ev("{n} ignored", n=n_ignored)] if n_ignored else [])
    what = Ev.seq(parts + [Ev("{name}={value}", name=k, value=v) for k, v in kwargs.items()], ", ")
    result = against_truth([(Ev("loss ({what})", what=what), out, truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context, label_smoothing: float):
    logits64, targets = make_inputs(ctx, BTC, 200, n_ignored=2)
    leaf = logits64.float().requires_grad_()
    out = run(ctx, leaf, targets, label_smoothing=label_smoothing)
    ctx.call(lambda: (out * 1.7).backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches the logits (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        ref = logits64.detach().clone().to(precision).requires_grad_()
        (reference(ref, targets, label_smoothing=label_smoothing) * 1.7).backward()
        grads.append(ref.grad)
    return against_truth([(Ev("d{name}", name="logits"), leaf.grad, *grads)])


def ignored_leak_check(ctx: Context):
    """float64: the logits of ignored rows must not move the loss, and get exactly zero gradient."""
    logits, targets = make_inputs(ctx, BTC, 300, n_ignored=3)
    ignored = (targets == -100).nonzero().tolist()
    leaf = logits.clone().requires_grad_()
    base = run(ctx, leaf, targets, label_smoothing=0.1)
    ctx.call(lambda: base.backward(), watch=False)
    for b, t in ignored:
        moved = logits.clone()
        moved[b, t] += 10 * ctx.randn(BTC[-1], gen=ctx.generator(301), dtype=torch.float64)
        change = (run(ctx, moved, targets, label_smoothing=0.1) - base).abs().item()
        if change > 1e-12 * max(1.0, abs(base.item())):
            return outcome("fail", Ev("changing the logits of the ignored position [{b}, {t}] moved the loss by {change:.3g}",
                                      b=b, t=t, change=change))  # fmt: skip
        if leaf.grad is not None and leaf.grad[b, t].abs().max().item() != 0:
            return outcome("fail", Ev("the ignored position [{b}, {t}] gets a non-zero gradient", b=b, t=t))
    return outcome("pass", Ev("the {n} ignored positions never reach the loss or its gradient (float64)", n=len(ignored)))


def large_logits_check(ctx: Context):
    """float32 logits around 1000, spread ~50: exp overflows, and softmax underflows to 0 before a log."""
    gen = ctx.generator(400)
    logits = 1000 + 50 * ctx.randn(N, C, gen=gen, dtype=torch.float64)
    targets = logits.argmin(dim=-1).to(ctx.device)  # the least likely class: log p is far below -100
    truth, same = reference(logits, targets), reference(logits.float(), targets)
    out = run(ctx, logits.float(), targets.clone())
    if first_nonfinite(out, truth) is not None:
        return outcome("fail", Ev("logits ~1000 (spread ~50, float32) give a loss of {got}, expected {expected:.6g}", got=out.item(),
                                  expected=truth.item()), "ce-unstable-logsumexp")  # fmt: skip
    return against_truth([(Ev("loss at logits ~1000, spread ~50 (float32)"), out, truth, same)])


def all_but_one_ignored_check(ctx: Context):
    logits, targets = make_inputs(ctx, (6, C), 500)
    targets[1:] = -100
    truth, same = reference(logits, targets), reference(logits.float(), targets)
    return against_truth([(Ev("loss with 5 of 6 targets ignored"), run(ctx, logits.float(), targets.clone()), truth, same)])


@dataclass(frozen=True)
class Probe:
    logits: torch.Tensor
    targets: torch.Tensor
    kwargs: tuple

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.logits.clone(), self.targets.clone(), **dict(self.kwargs))
        return out if isinstance(out, torch.Tensor) else None

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct cross-entropy" here.
        variant = variant if isinstance(variant, CrossEntropyVariant) else CORRECT_CE
        return reference(self.logits, self.targets, **dict(self.kwargs), variant=variant)


HYPOTHESES = (
    ("ce-ignored-in-mean", CrossEntropyVariant(divisor="all")),
    ("ce-ignored-in-mean", CrossEntropyVariant(ignored="class0")),
    ("ce-ignored-in-mean", CrossEntropyVariant(ignored="class0", divisor="all")),
    ("ce-ignored-in-mean", CrossEntropyVariant(smooth_rows="all")),
    ("ce-smoothing-wrong", CrossEntropyVariant(smoothing="others")),
    ("ce-smoothing-wrong", CrossEntropyVariant(smoothing="unnormalised")),
    ("ce-sum-not-mean", CrossEntropyVariant(divisor="sum")),
    ("ce-wrong-class-dim", CrossEntropyVariant(class_dim=-2)),
    ("ce-wrong-class-dim", CrossEntropyVariant(class_dim=1)),  # dim=1 written for [N, C]: the sequence of [B, T, C]
    ("ce-wrong-class-dim", CrossEntropyVariant(class_dim=0)),
)


class CrossEntropyTask:
    name = "cross_entropy"
    forbidden = FORBIDDEN
    builtin_what = Ev("cross-entropy")
    builtin_code = "uses-builtin-cross-entropy"

    def checks(self, ctx: Context) -> list[CheckDef]:
        logits, targets = make_inputs(ctx, BTC, 600, n_ignored=2, dtype=torch.float32)
        defs = [
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (N, C), False)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, BTC, False)),
            CheckDef("shape.one-row", "shape", partial(shape_check, ctx, (1, C), False)),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, (N, C), True)),
            CheckDef("numerical.2d", "numerical", partial(numerical_check, ctx, (N, C), 0)),
            CheckDef("numerical.3d", "numerical", partial(numerical_check, ctx, BTC, 1)),
            CheckDef("numerical.ignored", "numerical", partial(numerical_check, ctx, BTC, 2, 3)),
            CheckDef("numerical.ignore-index-0", "numerical", partial(numerical_check, ctx, (N, C), 3, 2, ignore_index=0)),
            CheckDef("numerical.smoothing", "numerical", partial(numerical_check, ctx, (N, C), 4, 0, label_smoothing=0.1)),
            CheckDef("numerical.smoothing-ignored", "numerical",
                     partial(numerical_check, ctx, BTC, 5, 3, label_smoothing=0.3)),  # fmt: skip
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, BTC, 6, 2, torch.float64, label_smoothing=0.2)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, ctx.sizes(300, (1, 5), (3, 9), (3, 40)), 9, 1)),
        ]
        if ctx.device.type == "cuda":
            defs += [
                CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(numerical_check, ctx, BTC, 7, 2, dt, label_smoothing=0.1))
                for dt in (torch.float16, torch.bfloat16)
            ]
        return defs + [
            CheckDef("gradient.logits", "gradient", partial(gradient_check, ctx, 0.0)),
            CheckDef("gradient.logits-smoothing", "gradient", partial(gradient_check, ctx, 0.2)),
            CheckDef("mask-leak.ignored", "mask-leak", partial(ignored_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("stability.one-valid-target", "stability", partial(all_but_one_ignored_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, logits, targets, label_smoothing=0.1),
                        {"logits": logits, "targets": targets}),  # fmt: skip
            ),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        logits, targets = make_inputs(ctx, (7, C), 1100, n_ignored=2)
        logits3, targets3 = make_inputs(ctx, (2, 3, C), 1101, n_ignored=1)
        return [
            Probe(logits, targets, ()),
            Probe(logits, targets, (("label_smoothing", 0.2),)),
            Probe(logits3, targets3, (("label_smoothing", 0.3),)),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = CrossEntropyTask()
