"""The ``ppo`` task: ``compute_gae(rewards, values, dones, gamma, lam)`` and ``ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None)``.

GAE as Schulman et al. (2016) define it and as CleanRL and TRL's PPO trainer compute it: backwards in time, the TD
residual ``r_t + γ V_{t+1} (1 - d_t) - V_t`` with ``dones[t]`` cutting the bootstrap of step t, and the recursion
``A_t = δ_t + γλ (1 - d_t) A_{t+1}``; returns ``A + V[:T]``. The clipped surrogate of Schulman et al. (2017):
``-min(r·A, clip(r, 1 - ε, 1 + ε)·A)`` with ``r = exp(logp - old_logp)``, the mean over counted tokens, and no gradient
into ``old_logp`` or ``advantages`` (a critic whose advantages carry a graph would be trained by the policy loss).
The reference is those formulas in float64. Rollouts have episodes ending mid-way and at the last step, rewards
and values of both signs; ratios lie on both sides of the clip range, 1e-3 away from its edges.
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

ENTRY_LOSS = "ppo_clip_loss"
LOSS_CHECKS = frozenset({"loss.shape", "loss.defaults", "loss.mask", "loss.int-mask", "loss.clip-0.1", "loss.float64",
                         "gradient.logp", "gradient.detached", "mask-leak.padding", "stability.large-log-ratios"})  # fmt: skip


@dataclass(frozen=True)
class PPOVariant:
    direction: str = "backward"  # backward (correct) | forward: the recursion run from t = 0
    done: str = "both"  # both (correct) | ignored | recursion: the bootstrap value not cut | bootstrap: the recursion not cut
    #   | next: cut by dones[t + 1] (CleanRL's "next step starts an episode" flags read as this contract's), none at T - 1
    lam: str = "used"  # used (correct) | missing: A_t = δ_t + γ (1 - d_t) A_{t+1}
    returns: str = "plus-values"  # plus-values (correct) | advantages: returns = A
    clip: str = "min"  # min (correct) | max
    ratio: str = "exp"  # exp (correct) | log: logp - old_logp used as the ratio | probs: exp(logp) - exp(old_logp) | quotient: logp / old_logp
    mean: str = "tokens"  # tokens (correct) | all: padding included | numel: masked sum / every position


CORRECT_PPO = PPOVariant()


def gae_reference(rewards, values, dones, gamma, lam, variant: PPOVariant = CORRECT_PPO):
    keep = 1.0 - dones.to(rewards.dtype)
    if variant.done == "next":
        keep = torch.cat([keep[1:], torch.ones_like(keep[:1])])
    cut_boot = keep if variant.done in ("both", "bootstrap", "next") else torch.ones_like(keep)
    cut_rec = keep if variant.done in ("both", "recursion", "next") else torch.ones_like(keep)
    factor = gamma * (lam if variant.lam == "used" else 1.0)
    deltas = rewards + gamma * values[1:] * cut_boot - values[:-1]
    steps = range(rewards.shape[0] - 1, -1, -1) if variant.direction == "backward" else range(rewards.shape[0])
    out, last = torch.zeros_like(rewards), torch.zeros_like(rewards[0])
    for t in steps:
        last = deltas[t] + factor * cut_rec[t] * last
        out[t] = last
    return out, (out + values[:-1] if variant.returns == "plus-values" else out.clone())


def loss_reference(logp, old, adv, clip_eps=0.2, mask=None, variant: PPOVariant = CORRECT_PPO):
    ratio = {"exp": lambda: torch.exp(logp - old), "log": lambda: logp - old, "probs": lambda: torch.exp(logp) - torch.exp(old),
             "quotient": lambda: logp / old}[variant.ratio]()
    pair = (ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    per_token = -(torch.min(*pair) if variant.clip == "min" else torch.max(*pair))
    if mask is None or variant.mean == "all":
        return per_token.mean()
    m = mask.to(per_token.dtype)
    return (per_token * m).sum() / (m.numel() if variant.mean == "numel" else m.sum())


def rollout(ctx: Context, offset: int, t: int, envs: int | None, dtype=torch.float64):
    """rewards [T(, E)], values [T + 1(, E)], bool dones: episodes end mid-way and at the last step of env 0."""
    gen = ctx.generator(offset)
    shape = (t,) if envs is None else (t, envs)
    rewards = ctx.randn(*shape, gen=gen, dtype=dtype)
    values = ctx.randn(t + 1, *shape[1:], gen=gen, dtype=dtype)
    dones = torch.rand(shape, generator=gen) < 0.25
    if envs is None:
        dones[t // 2] = dones[-1] = True
    else:
        dones[t // 2, 0] = dones[-1, 0] = True
        dones[:, -1] = False  # one env never ends: the bootstrap always counts there
    return rewards, values, dones.to(ctx.device)


def gae_run(ctx: Context, rewards, values, dones, gamma, lam):
    ret = ctx.call(ctx.entry, rewards, values, dones, gamma, lam)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(x, torch.Tensor) for x in ret)):
        raise WrongShape(Ev("compute_gae returned {type}, not an (advantages, returns) pair of tensors", type=type(ret).__name__))
    expect_shape(ret[0], rewards.shape, Ev("{code}", code="advantages"))
    expect_shape(ret[1], rewards.shape, Ev("{code}", code="returns"))
    return ret


def gae_check(ctx: Context, offset: int, t: int, envs, gamma: float, lam: float, dtype=torch.float32, float_dones: bool = False):
    rewards, values, dones = rollout(ctx, 100 + offset, t, envs)
    truth = gae_reference(rewards, values, dones, gamma, lam)
    sent = [x.to(dtype) for x in (rewards, values)]
    same = gae_reference(*sent, dones, gamma, lam)
    adv, ret = gae_run(ctx, *sent, dones.to(dtype) if float_dones else dones.clone(), gamma, lam)
    config = f"T={t}" + (f", n_envs={envs}" if envs else "") + f", γ={gamma:g}, λ={lam:g}" + (f", dones={str(dtype)[6:]}" if float_dones else "")
    what = Ev("{config}, {dtype}", config=config, dtype=str(dtype)[6:])
    for name, got in (("advantages", adv), ("returns", ret)):
        if got.dtype != dtype:
            wrong = Ev("{name} dtype is {dtype}, the rewards' is {expected}", name=name, dtype=str(got.dtype), expected=str(dtype))
            return outcome("fail", Ev("{label}: {what}", label=what, what=wrong))
    result = against_truth([(Ev("advantages ({what})", what=what), adv, truth[0], same[0]),
                            (Ev("returns ({what})", what=what), ret, truth[1], same[1])])  # fmt: skip
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gae_mutation_check(ctx: Context):
    rewards, values, dones = (x.float() if x.is_floating_point() else x for x in rollout(ctx, 500, 9, 3))
    before = [x.clone() for x in (rewards, values, dones)]
    gae_run(ctx, rewards, values, dones, 0.99, 0.95)
    changed = [n for n, x, b in zip(("rewards", "values", "dones"), (rewards, values, dones), before) if not torch.equal(x, b)]
    if changed:
        return outcome("fail", Ev("compute_gae modified in place: {names}", names=", ".join(changed)), "mutates-input")
    return outcome("pass", Ev("rewards, values, dones unchanged"))


def loss_handle(ctx: Context):
    handle = ctx.user.entry(ENTRY_LOSS)
    if handle is None:
        raise UserCodeError(Ev("the file does not define ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None)"), "not-implemented")
    return handle


def tokens(ctx: Context, offset: int, b: int, length: int, clip_eps: float = 0.2, spread: float = 0.3):
    """float64 (logp, old_logp, advantages, bool mask) [B, L]: ratios exp(±spread) around 1, none within 1e-3 of the
    clip edges; rows of 1 to L valid tokens."""
    gen = ctx.generator(offset)
    logp = -1.5 + 0.5 * ctx.randn(b, length, gen=gen, dtype=torch.float64)
    delta = spread * ctx.randn(b, length, gen=gen, dtype=torch.float64)
    edges = torch.tensor([1 - clip_eps, 1 + clip_eps], dtype=torch.float64).log()
    delta = torch.where((delta[..., None] - edges.to(delta.device)).abs().amin(-1) < 2e-3, delta + 5e-3, delta)
    adv = ctx.randn(b, length, gen=gen, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (b,), generator=gen)
    lengths[0] = length
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(ctx.device)
    return logp, logp - delta, adv, mask


def loss_run(ctx: Context, logp, old, adv, **kwargs):
    loss = ctx.call(loss_handle(ctx), logp, old, adv, **kwargs)
    if not isinstance(loss, torch.Tensor):
        raise WrongShape(Ev("ppo_clip_loss returned {type}, not a 0-dim loss tensor", type=type(loss).__name__))
    expect_shape(loss, (), Ev("ppo_clip_loss's loss"))
    return loss


def loss_check(ctx: Context, offset: int, dims, dtype=torch.float32, masked: bool = True, mask_as=None, clip_eps=None, spread=0.3):
    logp, old, adv, mask = tokens(ctx, 200 + offset, *dims, clip_eps or 0.2, spread)
    kwargs = {} if clip_eps is None else {"clip_eps": clip_eps}
    truth = loss_reference(logp, old, adv, mask=mask if masked else None, **kwargs)
    sent = [x.to(dtype) for x in (logp, old, adv)]
    same = loss_reference(*sent, mask=mask if masked else None, **kwargs)
    if masked:
        kwargs["mask"] = mask if mask_as is None else mask.to(mask_as)
    loss = loss_run(ctx, *sent, **kwargs)
    config = f"[B, L] = {list(dims)}" + ("" if masked else ", mask=None") + (f", mask.dtype={str(mask_as)[6:]}" if mask_as else "")
    config += (f", clip_eps={clip_eps:g}" if clip_eps else "") + (f", log_ratio_scale={spread:g}" if spread != 0.3 else "")
    what = Ev("{config}, {dtype}", config=config, dtype=str(dtype)[6:])
    if loss.dtype != dtype:
        wrong = Ev("loss dtype is {dtype}, the log-probs' is {expected}", dtype=str(loss.dtype), expected=str(dtype))
        return outcome("fail", Ev("{label}: {what}", label=what, what=wrong))
    result = against_truth([(Ev("loss ({what})", what=what), loss, truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context):
    """d loss / d logp per token; old_logp and advantages are sent as leaves that require grad: none may reach them."""
    logp, old, adv, mask = tokens(ctx, 300, 4, 7)
    leaves = [x.float().requires_grad_() for x in (logp, old, adv)]
    loss = loss_run(ctx, *leaves, mask=mask)
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    if leaves[0].grad is None:
        return outcome("fail", Ev("no gradient reaches logp (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        leaf = logp.float().to(precision).requires_grad_()
        (loss_reference(leaf, old.float().to(precision), adv.float().to(precision), mask=mask) * 1.7).backward()
        grads.append(leaf.grad)
    return against_truth([(Ev("{code}", code="d loss / d logp"), leaves[0].grad, *grads)])


def detached_check(ctx: Context):
    logp, old, adv, mask = tokens(ctx, 310, 3, 6)
    leaves = [x.clone().requires_grad_() for x in (logp, old, adv)]
    loss = loss_run(ctx, *leaves, mask=mask)
    ctx.call(lambda: loss.backward(), watch=False)
    leaked = [name for name, leaf in zip(("old_logp", "advantages"), leaves[1:]) if leaf.grad is not None and leaf.grad.abs().max().item() != 0]
    if leaked:
        names = [Ev("{code}", code=name) for name in leaked]
        names = Ev("{a} and {b}", a=names[0], b=names[1]) if len(names) == 2 else names[0]
        return outcome("fail", Ev("the loss sends a gradient into {names}: they come from the rollout (and the critic) "
                                  "and must be constants of the policy loss", names=names), "ppo-advantages-not-detached")  # fmt: skip
    return outcome("pass", Ev("old_logp and advantages, sent requiring grad, get no gradient"))


def padding_check(ctx: Context):
    """float64: padded positions move neither the loss nor get a gradient, whatever their values."""
    logp, old, adv, mask = tokens(ctx, 320, 5, 6)
    leaf = logp.clone().requires_grad_()
    base = loss_run(ctx, leaf, old, adv, mask=mask)
    ctx.call(lambda: base.backward(), watch=False)
    pad = ~mask
    moved = [x.clone() for x in (logp, old, adv)]
    for x in moved:
        x[pad] += 3 * ctx.randn(int(pad.sum()), gen=ctx.generator(321), dtype=torch.float64)
    change = (loss_run(ctx, *moved, mask=mask) - base).abs().item()
    if change > 1e-12 * max(1.0, abs(base.item())):
        return outcome("fail", Ev("changing the {n} padded positions moved the loss by {change:.3g}", n=int(pad.sum()), change=change),
                       "ppo-padding-in-mean")  # fmt: skip
    if leaf.grad is not None and leaf.grad[pad].abs().max().item() != 0:
        return outcome("fail", Ev("a padded position gets a non-zero gradient"), "ppo-padding-in-mean")
    return outcome("pass", Ev("the {n} padded positions never reach the loss or its gradient (float64)", n=int(pad.sum())))


@dataclass(frozen=True)
class Probe:
    """float64. GAE: the advantages, then the returns; loss: the loss, then its per-token gradient in logp times the count."""

    kind: str
    inputs: tuple
    kwargs: tuple

    def user(self, ctx: Context):
        if self.kind == "gae":
            ret = ctx.call(ctx.entry, *(x.clone() for x in self.inputs), **dict(self.kwargs))
            ok = isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(x, torch.Tensor) and x.shape == self.inputs[0].shape for x in ret)
            return torch.cat([ret[0].flatten(), ret[1].flatten()]) if ok else None
        logp, old, adv, mask = self.inputs
        leaf = logp.clone().requires_grad_()
        found = user_loss_grads(ctx, loss_handle(ctx), [leaf], old.clone(), adv.clone(), mask=mask, **dict(self.kwargs))
        return None if found is None else loss_probe(*found, int(mask.sum()))

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct PPO" here.
        variant = variant if isinstance(variant, PPOVariant) else CORRECT_PPO
        if self.kind == "gae":
            adv, ret = gae_reference(*self.inputs, **dict(self.kwargs), variant=variant)
            return torch.cat([adv.flatten(), ret.flatten()])
        logp, old, adv, mask = self.inputs
        leaf = logp.clone().requires_grad_()
        loss = loss_reference(leaf, old, adv, mask=mask, **dict(self.kwargs), variant=variant)
        return loss_probe(loss, torch.autograd.grad(loss, leaf), int(mask.sum()))


HYPOTHESES = (
    ("ppo-gae-forwards", PPOVariant(direction="forward")),
    ("ppo-done-not-cutting", PPOVariant(done="ignored")),
    ("ppo-done-not-cutting", PPOVariant(done="recursion")),
    ("ppo-done-not-cutting", PPOVariant(done="bootstrap")),
    ("ppo-done-not-cutting", PPOVariant(done="next")),
    ("ppo-gae-lambda-missing", PPOVariant(lam="missing")),
    ("ppo-returns-without-values", PPOVariant(returns="advantages")),
    ("ppo-clip-min-max-swapped", PPOVariant(clip="max")),
    ("ppo-ratio-wrong", PPOVariant(ratio="log")),
    ("ppo-ratio-wrong", PPOVariant(ratio="probs")),
    ("ppo-ratio-wrong", PPOVariant(ratio="quotient")),
    ("ppo-padding-in-mean", PPOVariant(mean="all")),
    ("ppo-padding-in-mean", PPOVariant(mean="numel")),
)


class PPOTask:
    name = "ppo"

    def checks(self, ctx: Context) -> list[CheckDef]:
        t, envs = ctx.sizes(300, (6, 17), (2, 5))
        defs = [
            CheckDef("shape.gae-1d", "shape", partial(gae_check, ctx, 0, 7, None, 0.99, 0.95)),
            CheckDef("shape.gae-envs", "shape", partial(gae_check, ctx, 1, 9, 3, 0.99, 0.95)),
            CheckDef("numerical.gae", "numerical", partial(gae_check, ctx, 2, 13, 4, 0.9, 0.8)),
            CheckDef("numerical.gae-drawn", "numerical", partial(gae_check, ctx, 3, t, envs, 0.97, 0.7)),
            CheckDef("numerical.gae-float-dones", "numerical", partial(gae_check, ctx, 4, 11, 3, 0.95, 0.9, float_dones=True)),
            CheckDef("numerical.gae-lambda-1", "numerical", partial(gae_check, ctx, 5, 10, 2, 0.9, 1.0)),
            CheckDef("numerical.gae-float64", "numerical", partial(gae_check, ctx, 6, 12, 3, 0.99, 0.95, torch.float64)),
            CheckDef("loss.shape", "shape", partial(loss_check, ctx, 0, (2, 5))),
            CheckDef("loss.defaults", "numerical", partial(loss_check, ctx, 1, (4, 7), masked=False)),
            CheckDef("loss.mask", "numerical", partial(loss_check, ctx, 2, (5, 9))),
            CheckDef("loss.int-mask", "numerical", partial(loss_check, ctx, 3, (3, 6), mask_as=torch.int64)),
            CheckDef("loss.clip-0.1", "numerical", partial(loss_check, ctx, 4, (4, 11), clip_eps=0.1)),
            CheckDef("loss.float64", "numerical", partial(loss_check, ctx, 5, (3, 8), torch.float64)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(dtype_id("numerical", dt, "numerical.gae"), "numerical", partial(gae_check, ctx, 7, 9, 3, 0.99, 0.95, dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
            defs += [CheckDef(dtype_id("loss", dt), "numerical", partial(loss_check, ctx, 7, (4, 7), dt)) for dt in (torch.float16, torch.bfloat16)]
        return defs + [
            CheckDef("gradient.logp", "gradient", partial(gradient_check, ctx)),
            CheckDef("gradient.detached", "gradient", partial(detached_check, ctx)),
            CheckDef("mask-leak.padding", "mask-leak", partial(padding_check, ctx)),
            CheckDef("stability.large-log-ratios", "stability", partial(loss_check, ctx, 6, (3, 7), spread=3.0)),
            CheckDef("robustness.no-mutation", "robustness", partial(gae_mutation_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        r1 = rollout(ctx, 1100, 9, 3)
        r2 = rollout(ctx, 1101, 8, None)
        return [
            Probe("gae", r1, (("gamma", 0.9), ("lam", 0.8))),
            Probe("gae", r2, (("gamma", 0.95), ("lam", 0.7))),
            Probe("loss", tokens(ctx, 1102, 4, 6, spread=0.4), ()),
            Probe("loss", tokens(ctx, 1103, 3, 5, 0.1, spread=0.4), (("clip_eps", 0.1),)),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = PPOTask()
