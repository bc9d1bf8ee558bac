"""The ``grpo_successors`` task: ``dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28)`` and
``gspo_loss(logp, old_logp, advantages, mask, eps)``.

DAPO (Yu et al. 2025) keeps GRPO's per-token clipped surrogate but decouples the clip range (clip-higher: a larger
``1 + eps_high`` lets unlikely tokens grow) and averages over every valid token of the group, so a long completion
weighs by its length (TRL's ``loss_type="dapo"`` over one group). GSPO (Zheng et al. 2025) replaces the per-token
ratios by one per sequence, ``exp(mean_t (logp - old_logp))`` over its valid tokens (the length-normalised sequence
likelihood ratio), clipped per sequence and averaged over sequences (TRL's ``importance_sampling_level="sequence"``).
The reference is those formulas in float64. Inputs put ratios on both sides of each clip range (1e-3 away from
its edges: per token for DAPO, per sequence for GSPO), advantages of both signs and completions of different lengths.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, loss_probe, user_loss_grads
from drill.grade.checks.compare import against_truth, expect_shape
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

ENTRY_GSPO = "gspo_loss"
GSPO_CHECKS = frozenset({"gspo.shape", "gspo.eps-0.2", "gspo.eps-3e-4", "gspo.int-mask", "gspo.drawn", "gspo.float64",
                         "gradient.gspo", "mask-leak.gspo-padding"})  # fmt: skip


@dataclass(frozen=True)
class SuccessorVariant:
    mean: str = "tokens"  # tokens (correct) | sample: a mean per completion, then over completions | all: padding counted
    clip: str = "decoupled"  # decoupled (correct) | low: eps_low both sides | high: eps_high both sides
    seq_ratio: str = "mean"  # mean (correct) | sum: exp(sum), no length normalisation | token: per-token ratios | all: / T


CORRECT_SUCCESSOR = SuccessorVariant()


def dapo_reference(logp, old, adv, mask, eps_low=0.2, eps_high=0.28, variant: SuccessorVariant = CORRECT_SUCCESSOR):
    m = mask.to(logp.dtype)
    a = adv[:, None]
    low, high = {"decoupled": (eps_low, eps_high), "low": (eps_low, eps_low), "high": (eps_high, eps_high)}[variant.clip]
    ratio = torch.exp(logp - old)
    per_token = -torch.min(ratio * a, torch.clamp(ratio, 1 - low, 1 + high) * a)
    if variant.mean == "sample":
        return ((per_token * m).sum(1) / m.sum(1)).mean()
    if variant.mean == "all":
        return per_token.mean()
    return (per_token * m).sum() / m.sum()


def gspo_reference(logp, old, adv, mask, eps, variant: SuccessorVariant = CORRECT_SUCCESSOR):
    m = mask.to(logp.dtype)
    diff = (logp - old) * m
    if variant.seq_ratio == "token":
        ratio, a = torch.exp(logp - old), adv[:, None]
        per = -torch.min(ratio * a, torch.clamp(ratio, 1 - eps, 1 + eps) * a)
        return ((per * m).sum(1) / m.sum(1)).mean()
    log_ratio = {"mean": lambda: diff.sum(1) / m.sum(1), "sum": lambda: diff.sum(1), "all": lambda: (logp - old).mean(1)}[variant.seq_ratio]()
    ratio = torch.exp(log_ratio)
    return -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv).mean()


def group(ctx: Context, offset: int, g: int, length: int, spread: float = 0.3, edges=(0.2, 0.28), seq_eps=None):
    """float64 (logp, old_logp, advantages [G], bool mask): ratios exp(±spread) per token, none within 1e-3 of the
    token clip edges (``edges``: eps_low, eps_high); with ``seq_eps``, each completion's mean log-ratio is kept 1e-3·eps
    or more from log(1 ± seq_eps) and spread across both sides of the range. Completions of 1 to L valid tokens."""
    gen = ctx.generator(offset)
    logp = -1.5 + 0.5 * ctx.randn(g, length, gen=gen, dtype=torch.float64)
    delta = spread * ctx.randn(g, length, gen=gen, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (g,), generator=gen)
    lengths[0] = length
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(ctx.device)
    if seq_eps is None:
        cuts = torch.tensor([1 - edges[0], 1 + edges[1]], dtype=torch.float64).log().to(delta.device)
        delta = torch.where((delta[..., None] - cuts).abs().amin(-1) < 2e-3, delta + 5e-3, delta)
    else:  # per sequence: a target mean log-ratio between -3 eps and 3 eps, away from the edges
        m = mask.to(delta.dtype)
        delta = (delta - (delta * m).sum(1, keepdim=True) / m.sum(1, keepdim=True)) * m
        target = seq_eps * (6 * torch.rand(g, generator=gen, dtype=torch.float64) - 3).to(delta.device)
        cuts = torch.tensor([1 - seq_eps, 1 + seq_eps], dtype=torch.float64).log().to(delta.device)
        near = (target[:, None] - cuts).abs().amin(-1) < 0.05 * seq_eps
        target = torch.where(near, target + 0.1 * seq_eps, target)
        delta = delta + target[:, None]
    adv = ctx.randn(g, gen=gen, dtype=torch.float64)
    return logp, logp - delta, adv, mask


def gspo_handle(ctx: Context):
    handle = ctx.user.entry(ENTRY_GSPO)
    if handle is None:
        raise UserCodeError(Ev("the file does not define gspo_loss(logp, old_logp, advantages, mask, eps)"), "not-implemented")
    return handle


def run(ctx: Context, which: str, logp, old, adv, mask, **kwargs):
    target = ctx.entry if which == "dapo" else gspo_handle(ctx)
    loss = ctx.call(target, logp, old, adv, mask, **kwargs)
    if not isinstance(loss, torch.Tensor):
        raise WrongShape(Ev("{which}_loss returned {type}, not a 0-dim loss tensor", which=which, type=type(loss).__name__))
    expect_shape(loss, (), Ev("{which}_loss's loss", which=which))
    return loss


def loss_check(ctx: Context, which: str, offset: int, dims, dtype=torch.float32, mask_as=None, spread=0.3, **kwargs):
    seq_eps = kwargs.get("eps") if which == "gspo" else None
    logp, old, adv, mask = group(ctx, 100 + offset, *dims, spread, (kwargs.get("eps_low", 0.2), kwargs.get("eps_high", 0.28)), seq_eps)
    ref = dapo_reference if which == "dapo" else gspo_reference
    truth = ref(logp, old, adv, mask, **kwargs)
    sent = [x.to(dtype) for x in (logp, old, adv)]
    same = ref(*sent, mask, **kwargs)
    loss = run(ctx, which, *sent, mask if mask_as is None else mask.to(mask_as), **kwargs)
    call = f"{which}_loss, [G, T] = {list(dims)}" + "".join(f", {k}={v:g}" for k, v in kwargs.items())  # the call, as code
    call += (f", mask.dtype={str(mask_as)[6:]}" if mask_as else "") + (f", log_ratio_scale={spread:g}" if spread != 0.3 else "")
    what = Ev("{call}, {dtype}", call=call, dtype=str(dtype)[6:])
    if loss.dtype != dtype:
        return outcome("fail", Ev("{what}: loss dtype is {dtype}, the log-probs' is {expected}", what=what, dtype=str(loss.dtype),
                                  expected=str(dtype)))  # fmt: skip
    result = against_truth([(Ev("loss ({what})", what=what), loss, truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context, which: str, **kwargs):
    """d loss / d logp per token; old_logp and advantages sent requiring grad get none."""
    logp, old, adv, mask = group(ctx, 300 + (which == "gspo"), 5, 7, seq_eps=kwargs.get("eps") if which == "gspo" else None)
    leaves = [x.float().requires_grad_() for x in (logp, old, adv)]
    loss = run(ctx, which, *leaves, mask, **kwargs)
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    if leaves[0].grad is None:
        return outcome("fail", Ev("no gradient of {which}_loss reaches logp (is the loss detached?)", which=which))
    leaked = [n for n, x in zip(("old_logp", "advantages"), leaves[1:]) if x.grad is not None and x.grad.abs().max().item() != 0]
    if leaked:
        named = [Ev("{code}", code=n) for n in leaked]
        leaked = Ev("{a} and {b}", a=named[0], b=named[1]) if len(named) == 2 else named[0]
        return outcome("fail", Ev("{which}_loss sends a gradient into {names}: rollout constants, detach them", which=which, names=leaked))
    ref = dapo_reference if which == "dapo" else gspo_reference
    grads = []
    for precision in (torch.float64, torch.float32):
        leaf = logp.float().to(precision).requires_grad_()
        (ref(leaf, old.float().to(precision), adv.float().to(precision), mask, **kwargs) * 1.7).backward()
        grads.append(leaf.grad)
    return against_truth([(Ev("d {which}_loss / d logp", which=which), leaves[0].grad, *grads)])


def padding_check(ctx: Context, which: str, **kwargs):
    """float64: padded positions move neither the loss nor get a gradient, whatever their values."""
    logp, old, adv, mask = group(ctx, 320 + (which == "gspo"), 6, 6, seq_eps=kwargs.get("eps") if which == "gspo" else None)
    leaf = logp.clone().requires_grad_()
    base = run(ctx, which, leaf, old, adv, mask, **kwargs)
    ctx.call(lambda: base.backward(), watch=False)
    pad = ~mask
    moved = [x.clone() for x in (logp, old)]
    for x in moved:
        x[pad] += 3 * ctx.randn(int(pad.sum()), gen=ctx.generator(321), dtype=torch.float64)
    change = (run(ctx, which, *moved, adv, mask, **kwargs) - base).abs().item()
    code = "dapo-padding-in-mean" if which == "dapo" else "gspo-padding-in-ratio"
    if change > 1e-12 * max(1.0, abs(base.item())):
        return outcome("fail", Ev("{which}_loss: changing the {n} padded positions moved the loss by {change:.3g}", which=which,
                                  n=int(pad.sum()), change=change), code)  # fmt: skip
    if leaf.grad is not None and leaf.grad[pad].abs().max().item() != 0:
        return outcome("fail", Ev("{which}_loss: a padded position gets a non-zero gradient", which=which), code)
    return outcome("pass", Ev("{which}_loss: the {n} padded positions never reach the loss or its gradient (float64)", which=which, n=int(pad.sum())))


def no_mutation_check(ctx: Context):
    inputs = [x.float() if x.is_floating_point() else x for x in group(ctx, 500, 4, 6)]
    before = [x.clone() for x in inputs]
    run(ctx, "dapo", *inputs)
    run(ctx, "gspo", *inputs, eps=0.2)
    changed = [n for n, x, b in zip(("logp", "old_logp", "advantages", "mask"), inputs, before) if not torch.equal(x, b)]
    if changed:
        return outcome("fail", Ev("modified in place: {names}", names=", ".join(changed)), "mutates-input")
    return outcome("pass", Ev("logp, old_logp, advantages, mask unchanged by either loss"))


@dataclass(frozen=True)
class Probe:
    """float64: the loss, then its per-token gradient in logp (times the token count)."""

    which: str
    inputs: tuple
    kwargs: tuple

    def user(self, ctx: Context):
        logp, old, adv, mask = self.inputs
        leaf = logp.clone().requires_grad_()
        fn = ctx.entry if self.which == "dapo" else gspo_handle(ctx)
        found = user_loss_grads(ctx, fn, [leaf], old.clone(), adv.clone(), mask, **dict(self.kwargs))
        return None if found is None else loss_probe(*found, int(mask.sum()))

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct losses" here.
        variant = variant if isinstance(variant, SuccessorVariant) else CORRECT_SUCCESSOR
        logp, old, adv, mask = self.inputs
        leaf = logp.clone().requires_grad_()
        ref = dapo_reference if self.which == "dapo" else gspo_reference
        loss = ref(leaf, old, adv, mask, **dict(self.kwargs), variant=variant)
        return loss_probe(loss, torch.autograd.grad(loss, leaf), int(mask.sum()))


HYPOTHESES = (
    ("dapo-sample-mean", SuccessorVariant(mean="sample")),
    ("dapo-padding-in-mean", SuccessorVariant(mean="all")),
    ("dapo-symmetric-clip", SuccessorVariant(clip="low")),
    ("dapo-symmetric-clip", SuccessorVariant(clip="high")),
    ("gspo-ratio-not-length-normalised", SuccessorVariant(seq_ratio="sum")),
    ("gspo-token-level-ratio", SuccessorVariant(seq_ratio="token")),
    ("gspo-padding-in-ratio", SuccessorVariant(seq_ratio="all")),
)


class GRPOSuccessorsTask:
    name = "grpo_successors"

    def checks(self, ctx: Context) -> list[CheckDef]:
        g, t = ctx.sizes(300, (3, 9), (4, 13))
        defs = [
            CheckDef("shape.dapo", "shape", partial(loss_check, ctx, "dapo", 0, (4, 6))),
            CheckDef("numerical.dapo-defaults", "numerical", partial(loss_check, ctx, "dapo", 1, (6, 9))),
            CheckDef("numerical.dapo-eps", "numerical", partial(loss_check, ctx, "dapo", 2, (5, 7), eps_low=0.1, eps_high=0.3)),
            CheckDef("numerical.dapo-int-mask", "numerical", partial(loss_check, ctx, "dapo", 3, (4, 8), mask_as=torch.int64)),
            CheckDef("numerical.dapo-drawn", "numerical", partial(loss_check, ctx, "dapo", 4, (g, t))),
            CheckDef("numerical.dapo-float64", "numerical", partial(loss_check, ctx, "dapo", 5, (5, 11), torch.float64, eps_high=0.25)),
            CheckDef("gspo.shape", "shape", partial(loss_check, ctx, "gspo", 10, (4, 6), eps=0.2)),
            CheckDef("gspo.eps-0.2", "numerical", partial(loss_check, ctx, "gspo", 11, (7, 9), eps=0.2)),
            CheckDef("gspo.eps-3e-4", "numerical", partial(loss_check, ctx, "gspo", 12, (6, 10), torch.float64, eps=3e-4)),
            CheckDef("gspo.int-mask", "numerical", partial(loss_check, ctx, "gspo", 13, (5, 8), mask_as=torch.int64, eps=0.1)),
            CheckDef("gspo.drawn", "numerical", partial(loss_check, ctx, "gspo", 14, (g, t), eps=0.15)),
            CheckDef("gspo.float64", "numerical", partial(loss_check, ctx, "gspo", 15, (5, 11), torch.float64, eps=0.05)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(dtype_id("numerical.dapo", dt), "numerical", partial(loss_check, ctx, "dapo", 6, (4, 7), dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
            defs += [CheckDef(dtype_id("gspo", dt), "numerical", partial(loss_check, ctx, "gspo", 16, (4, 7), dt, eps=0.2))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("gradient.dapo", "gradient", partial(gradient_check, ctx, "dapo")),
            CheckDef("gradient.gspo", "gradient", partial(gradient_check, ctx, "gspo", eps=0.2)),
            CheckDef("mask-leak.dapo-padding", "mask-leak", partial(padding_check, ctx, "dapo")),
            CheckDef("mask-leak.gspo-padding", "mask-leak", partial(padding_check, ctx, "gspo", eps=0.2)),
            CheckDef("stability.large-log-ratios", "stability", partial(loss_check, ctx, "dapo", 7, (4, 7), spread=3.0)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [
            Probe("dapo", group(ctx, 1100, 5, 6, spread=0.4), ()),
            Probe("dapo", group(ctx, 1101, 4, 7, spread=0.4, edges=(0.1, 0.3)), (("eps_low", 0.1), ("eps_high", 0.3))),
            Probe("gspo", group(ctx, 1102, 6, 7, seq_eps=0.2), (("eps", 0.2),)),
            Probe("gspo", group(ctx, 1103, 5, 6, seq_eps=0.1), (("eps", 0.1),)),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = GRPOSuccessorsTask()
