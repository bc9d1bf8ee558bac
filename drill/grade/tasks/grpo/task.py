"""The ``grpo`` task: ``grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04)``.

GRPO as in DeepSeekMath (Shao et al. 2024) and TRL (its token-level ``loss_type="bnpo"``): group-normalised advantages
``(r - mean) / (std + 1e-4)`` (``torch.std``, unbiased), the PPO clipped surrogate per token against the
sampling policy, the k3 KL estimator ``exp(ref - logp) - (ref - logp) - 1`` against the reference, and
the mean over every valid token of the batch. The reference is that formula in float64 (and in the
user's dtype for the tolerance rule). The inputs put ratios on both sides of the clip range (kept
1e-3 away from its edges, where the gradient jumps), advantages of both signs, and padding of
different lengths, so each classic mistake moves the loss or its per-token gradient; the probes
compare both, the gradient being the finer evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import loss_probe, user_loss_grads
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

B, G, L = 2, 4, 5
NAMES = ("logps", "old_logps", "ref_logps", "rewards", "mask")


@dataclass(frozen=True)
class GRPOVariant:
    adv: str = "group"  # group (correct) | batch: normalised over the whole batch
    std: str = "unbiased"  # unbiased (correct, torch.std) | biased
    clip: str = "min"  # min (correct, pessimistic) | max
    kl: str = "k3"  # k3 (correct) | reversed: exp(logp - ref) - (logp - ref) - 1 | plus: the penalty's sign flipped
    mean: str = "tokens"  # tokens (correct) | all: padding included | numel: masked sum / every position | sequence


CORRECT_GRPO = GRPOVariant()


def reference(logps, old, ref, rewards, mask, clip_eps=0.2, beta=0.04, variant: GRPOVariant = CORRECT_GRPO):
    b, g = rewards.shape
    lp, old, ref = (t.reshape(b * g, -1) for t in (logps, old, ref))
    m = mask.reshape(b * g, -1).to(lp.dtype)
    unbiased = variant.std == "unbiased"
    if variant.adv == "group":
        adv = (rewards - rewards.mean(dim=1, keepdim=True)) / (rewards.std(dim=1, keepdim=True, unbiased=unbiased) + 1e-4)
    else:
        adv = (rewards - rewards.mean()) / (rewards.std(unbiased=unbiased) + 1e-4)
    adv = adv.reshape(b * g, 1).to(lp.dtype)
    ratio = torch.exp(lp - old)
    pair = (ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    objective = torch.min(*pair) if variant.clip == "min" else torch.max(*pair)
    d = lp - ref if variant.kl == "reversed" else ref - lp
    kl = torch.exp(d) - d - 1
    per_token = -(objective + beta * kl) if variant.kl == "plus" else -(objective - beta * kl)
    if variant.mean == "all":
        return per_token.mean()
    if variant.mean == "numel":
        return (per_token * m).sum() / m.numel()
    if variant.mean == "sequence":
        return ((per_token * m).sum(dim=1) / m.sum(dim=1)).mean()
    return (per_token * m).sum() / m.sum()


def make_inputs(ctx: Context, offset: int, b: int = B, g: int = G, length: int = L, clip_eps: float = 0.2,
                spread: float = 0.3, equal_group: bool = False):  # fmt: skip
    """float64 (logps, old, ref, rewards, bool mask) of shape [B*G, L]: ratios exp(±spread) around 1, none within
    1e-3 of the clip edges; completions of lengths 1 to L (at least one valid token each)."""
    gen = ctx.generator(offset)
    n = b * g
    logps = -1.5 + 0.5 * ctx.randn(n, length, gen=gen, dtype=torch.float64)
    delta = spread * ctx.randn(n, length, gen=gen, dtype=torch.float64)
    edges = torch.tensor([1 - clip_eps, 1 + clip_eps], dtype=torch.float64).log()
    near = (delta[..., None] - edges.to(delta.device)).abs().amin(dim=-1) < 2e-3
    delta = torch.where(near, delta + 5e-3, delta)
    old = logps - delta
    ref = logps + 0.3 * ctx.randn(n, length, gen=gen, dtype=torch.float64)
    rewards = ctx.randn(b, g, gen=gen, dtype=torch.float64)
    if equal_group:
        rewards[0] = 0.7
    lengths = torch.randint(1, length + 1, (n,), generator=gen)
    lengths[0] = length
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(ctx.device)
    return logps, old, ref, rewards, mask


def run(ctx: Context, inputs, grouped: bool = False, **kwargs):
    logps, old, ref, rewards, mask = inputs
    if grouped:
        b, g = rewards.shape
        logps, old, ref, mask = (t.reshape(b, g, -1) for t in (logps, old, ref, mask))
    ret = ctx.call(ctx.entry, logps, old, ref, rewards, mask, **kwargs)
    loss = ret[0] if isinstance(ret, (tuple, list)) and ret else ret
    if not isinstance(loss, torch.Tensor):
        raise WrongShape(Ev("returned {type}, not a 0-dim loss tensor", type=type(loss).__name__))
    expect_shape(loss, (), Ev("loss"))
    return loss


def cast(inputs, dtype, mask_as=None):
    logps, old, ref, rewards, mask = inputs
    mask = mask if mask_as is None else mask.to(mask_as)
    return (logps.to(dtype), old.to(dtype), ref.to(dtype), rewards.to(dtype), mask)


def shape_check(ctx: Context, grouped: bool, mask_as=None):
    inputs = cast(make_inputs(ctx, 1), torch.float32, mask_as)
    loss = run(ctx, inputs, grouped)
    if loss.dtype != torch.float32:
        return outcome("fail", Ev("loss dtype is {dtype}, the log-probs' is {expected}", dtype=str(loss.dtype), expected="torch.float32"))
    shape = "[B, G, L]" if grouped else "[B*G, L]"
    if mask_as:
        return outcome("pass", Ev("a 0-dim loss from {shape} inputs, a {dtype} 0/1 mask", shape=shape, dtype=str(mask_as)[6:]))
    return outcome("pass", Ev("a 0-dim loss from {shape} inputs", shape=shape))


def numerical_check(ctx: Context, offset: int, dtype=torch.float32, grouped: bool = False, on_policy: bool = False,
                    mask_as=None, size=(B, G, L), **kwargs):  # fmt: skip
    inputs = make_inputs(ctx, 100 + offset, *size, clip_eps=kwargs.get("clip_eps", 0.2))
    if on_policy:
        inputs = (inputs[0], inputs[0].clone(), *inputs[2:])
    sent = cast(inputs, dtype, mask_as)
    truth = reference(*cast(sent, torch.float64), **kwargs)
    same = reference(*sent, **kwargs)
    # a float64 loss may do part of its work in float32 (TRL's nanstd divides int64 counts, which torch does in
    # float32): judged at float32 then, with a note (checks.compare.against_truth)
    narrow = reference(*cast(sent, torch.float32), **kwargs).double() if dtype == torch.float64 else None
    parts = [Ev("{code}", code=", ".join(f"{k}={v:g}" for k, v in kwargs.items())) if kwargs else Ev("defaults")]
    parts += ([Ev("{code}", code="old = logps")] if on_policy else []) + ([Ev("{code}", code="[B, G, L]")] if grouped else [])
    parts += ([Ev("a {dtype} 0/1 mask", dtype=str(mask_as)[6:])] if mask_as else []) + [str(dtype)[6:]]
    what = Ev.seq(parts, ", ")
    result = against_truth([(Ev("loss ({what})", what=what), run(ctx, sent, grouped, **kwargs), truth, same, narrow)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context, offset: int = 0, size=(B, G, L), **kwargs):
    """d loss / d logps, per token (the only input that carries the policy's gradient)."""
    inputs = make_inputs(ctx, 200 + offset, *size, clip_eps=kwargs.get("clip_eps", 0.2))
    leaf = inputs[0].float().requires_grad_()
    loss = run(ctx, (leaf, *cast(inputs, torch.float32)[1:]), **kwargs)
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches logps (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        sent = cast(cast(inputs, torch.float32), precision)
        ref_leaf = sent[0].clone().requires_grad_()
        (reference(ref_leaf, *sent[1:], **kwargs) * 1.7).backward()
        grads.append(ref_leaf.grad)
    return against_truth([(Ev("{code}", code="d loss / d logps"), leaf.grad, *grads)])


def drawn_check(ctx: Context, check):
    """``check`` (numerical_check or gradient_check) at B, G, L, clip_eps and beta drawn from the seed; the sizes
    are never the fixed checks' (2, 4, 5), so a hard-coded group size or length fails."""
    size = ctx.sizes(600, (1, 5), (2, 8), (3, 12), avoid=(B, G, L))
    clip, beta = ctx.sizes(601, (10, 30), (0, 50))
    kwargs = {"clip_eps": clip / 100, "beta": beta / 100}
    result = check(ctx, 9, size=size, **kwargs)
    given = "" if check is numerical_check else f", clip_eps={kwargs['clip_eps']:g}, beta={kwargs['beta']:g}"  # its message has them
    label = Ev("a configuration drawn from the seed ({config})", config=f"B={size[0]}, G={size[1]}, L={size[2]}{given}")
    result.message = Ev("{label}: {what}", label=label, what=result.message)
    return result


def padding_check(ctx: Context):
    """float64: padded positions move neither the loss nor get a gradient, whatever their values."""
    inputs = make_inputs(ctx, 300)
    logps, old, ref, rewards, mask = inputs
    leaf = logps.clone().requires_grad_()
    base = run(ctx, (leaf, old, ref, rewards, mask))
    ctx.call(lambda: base.backward(), watch=False)
    padded = (~mask).nonzero().tolist()
    if not padded:
        return outcome("skip", Ev("no padding drawn"))
    gen = ctx.generator(301)
    moved = [t.clone() for t in (logps, old, ref)]
    for t in moved:
        t[~mask] += 3 * ctx.randn(int((~mask).sum()), gen=gen, dtype=torch.float64)
    change = (run(ctx, (*moved, rewards, mask)) - base).abs().item()
    if change > 1e-12 * max(1.0, abs(base.item())):
        return outcome("fail", Ev("changing the log-probs at the {n} padded positions moved the loss by {change:.3g}: "
                                  "padding must not reach the loss", n=len(padded), change=change), "grpo-padding-in-mean")  # fmt: skip
    if leaf.grad is not None and leaf.grad[~mask].abs().max().item() != 0:
        r, c = padded[int(leaf.grad[~mask].abs().argmax())]
        return outcome("fail", Ev("the padded position [{r}, {c}] gets a non-zero gradient", r=r, c=c), "grpo-padding-in-mean")
    return outcome("pass", Ev("the {n} padded positions never reach the loss or its gradient (float64)", n=len(padded)))


def equal_rewards_check(ctx: Context):
    """A group whose rewards are all equal: std 0, advantages 0 (the 1e-4 keeps it finite)."""
    inputs = cast(make_inputs(ctx, 400, equal_group=True), torch.float32)
    truth, same = reference(*cast(inputs, torch.float64)), reference(*inputs)
    loss = run(ctx, inputs)
    if first_nonfinite(loss, truth) is not None:
        return outcome("fail", Ev("a group with equal rewards gives a loss of {loss}: std is 0 there, (r - mean) / (std + 1e-4) "
                                  "needs the 1e-4", loss=loss.item()))  # fmt: skip
    return against_truth([(Ev("loss with one group of equal rewards (float32)"), loss, truth, same)])


def large_ratio_check(ctx: Context):
    """float32 log-ratios of a few units either way: exp(ref - logp) up to e^8, ratios clipped hard."""
    inputs = cast(make_inputs(ctx, 410, spread=3.0), torch.float32)
    truth, same = reference(*cast(inputs, torch.float64)), reference(*inputs)
    return against_truth([(Ev("loss at log-ratios of a few units (float32)"), run(ctx, inputs), truth, same)])


def no_mutation_check(ctx: Context):
    inputs = cast(make_inputs(ctx, 500), torch.float32)
    before = [t.clone() for t in inputs]
    run(ctx, inputs)
    changed = [n for n, t, b in zip(NAMES, inputs, before) if not torch.equal(t, b)]
    if changed:
        return outcome("fail", Ev("modified in place: {names}", names=", ".join(changed)), "mutates-input")
    return outcome("pass", Ev("{names} unchanged", names=", ".join(NAMES)))


@dataclass(frozen=True)
class Probe:
    """float64; the output is the loss followed by its per-token gradient in logps (times the token count)."""

    inputs: tuple
    kwargs: tuple

    def user(self, ctx: Context):
        leaf = self.inputs[0].clone().requires_grad_()
        found = user_loss_grads(ctx, ctx.entry, [leaf], *(t.clone() for t in self.inputs[1:]), unpack=True, **dict(self.kwargs))
        return None if found is None else loss_probe(*found, self.tokens)

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct GRPO loss" here.
        variant = variant if isinstance(variant, GRPOVariant) else CORRECT_GRPO
        leaf = self.inputs[0].clone().requires_grad_()
        loss = reference(leaf, *self.inputs[1:], **dict(self.kwargs), variant=variant)
        return loss_probe(loss, torch.autograd.grad(loss, leaf), self.tokens)

    @property
    def tokens(self) -> int:
        """The valid-token count: the gradient is scaled by it, so each token's entry is O(1)."""
        return int(self.inputs[4].sum())


HYPOTHESES = (
    ("grpo-advantages-batch-normalised", GRPOVariant(adv="batch")),
    ("grpo-advantages-batch-normalised", GRPOVariant(adv="batch", std="biased")),
    ("grpo-std-biased", GRPOVariant(std="biased")),
    ("grpo-clip-wrong-side", GRPOVariant(clip="max")),
    ("grpo-kl-sign", GRPOVariant(kl="reversed")),
    ("grpo-kl-sign", GRPOVariant(kl="plus")),
    ("grpo-padding-in-mean", GRPOVariant(mean="all")),
    ("grpo-padding-in-mean", GRPOVariant(mean="numel")),
    ("grpo-sequence-mean", GRPOVariant(mean="sequence")),
)


class GRPOTask:
    name = "grpo"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("shape.flat", "shape", partial(shape_check, ctx, False)),
            CheckDef("shape.grouped", "shape", partial(shape_check, ctx, True)),
            CheckDef("shape.float-mask", "shape", partial(shape_check, ctx, False, torch.float32)),
            CheckDef("numerical.defaults", "numerical", partial(numerical_check, ctx, 0)),
            CheckDef("numerical.grouped", "numerical", partial(numerical_check, ctx, 1, grouped=True)),
            CheckDef("numerical.int-mask", "numerical", partial(numerical_check, ctx, 2, mask_as=torch.int64)),
            CheckDef("numerical.on-policy", "numerical", partial(numerical_check, ctx, 3, on_policy=True)),
            CheckDef("numerical.strong-kl", "numerical", partial(numerical_check, ctx, 4, beta=0.5)),
            CheckDef("numerical.no-kl-clip-0.1", "numerical", partial(numerical_check, ctx, 5, beta=0.0, clip_eps=0.1)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 6, torch.float64, beta=0.1)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx, numerical_check)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(numerical_check, ctx, 7, dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("gradient.logps", "gradient", partial(gradient_check, ctx)),
            CheckDef("gradient.drawn", "gradient", partial(drawn_check, ctx, gradient_check)),
            CheckDef("mask-leak.padding", "mask-leak", partial(padding_check, ctx)),
            CheckDef("stability.equal-rewards", "stability", partial(equal_rewards_check, ctx)),
            CheckDef("stability.large-log-ratios", "stability", partial(large_ratio_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [
            Probe(make_inputs(ctx, 1100, spread=0.4), (("beta", 0.5),)),
            Probe(make_inputs(ctx, 1101, 3, 3, 4, spread=0.4), (("beta", 0.2), ("clip_eps", 0.1))),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = GRPOTask()
