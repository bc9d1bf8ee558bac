"""The ``dpo_loss`` task: ``dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta) -> (loss, chosen_rewards, rejected_rewards)``.

DPO (Rafailov et al. 2023, as TRL's ``sigmoid`` loss): ``loss = mean(-log σ(β·((π_c - π_r) - (ref_c - ref_r))))``,
rewards ``β·(π - ref)`` per example. The reference is ``F.logsigmoid`` in float64 (and in the user's dtype for
the tolerance rule); ``F.logsigmoid`` and ``F.softplus`` are allowed, since the point is to know that
``log(sigmoid(x))`` underflows: the large-margin check sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_shape, first_nonfinite
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

B = 8
NAMES = ("policy_chosen_logps", "policy_rejected_logps", "ref_chosen_logps", "ref_rejected_logps")


@dataclass(frozen=True)
class DPOVariant:
    sign: int = 1  # 1 (correct) | -1: the margin reversed (reference minus policy)
    beta: str = "inside"  # inside (correct): -logsigmoid(beta * m) | outside: -beta * logsigmoid(m)


CORRECT_DPO = DPOVariant()


def reference(inputs, beta, variant: DPOVariant = CORRECT_DPO):
    """(loss, chosen_rewards, rejected_rewards) in the inputs' dtype."""
    pc, pr, rc, rr = inputs
    margin = variant.sign * ((pc - pr) - (rc - rr))
    loss = -F.logsigmoid(beta * margin).mean() if variant.beta == "inside" else -beta * F.logsigmoid(margin).mean()
    return loss, beta * (pc - rc), beta * (pr - rr)


def make_inputs(ctx: Context, offset: int, b: int = B, spread: float = 5.0, dtype=torch.float64):
    """Sequence log-probs around -100; the policy differs from the reference by ~``spread`` nats."""
    gen = ctx.generator(offset)
    rc, rr = (-100 + 30 * ctx.randn(b, gen=gen, dtype=torch.float64) for _ in range(2))
    pc, pr = (r + spread * ctx.randn(b, gen=gen, dtype=torch.float64) for r in (rc, rr))
    return tuple(t.to(dtype) for t in (pc, pr, rc, rr))


def run(ctx: Context, inputs, beta, b: int):
    ret = ctx.call(ctx.entry, *inputs, beta=beta)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 3 and all(isinstance(t, torch.Tensor) for t in ret)):
        if isinstance(ret, (tuple, list)):
            raise WrongShape(Ev("returned a {type} of {n}, not (loss, chosen_rewards, rejected_rewards), three tensors",
                                type=type(ret).__name__, n=len(ret)))  # fmt: skip
        raise WrongShape(Ev("returned {type}, not (loss, chosen_rewards, rejected_rewards), three tensors", type=type(ret).__name__))
    loss, chosen, rejected = ret
    expect_shape(loss, (), Ev("loss"))
    expect_shape(chosen, (b,), Ev("{code}", code="chosen_rewards"))
    expect_shape(rejected, (b,), Ev("{code}", code="rejected_rewards"))
    return loss, chosen, rejected


def shape_check(ctx: Context, b: int):
    inputs = make_inputs(ctx, 1, b, dtype=torch.float32)
    loss, chosen, rejected = run(ctx, inputs, 0.1, b)
    for name, t in (("loss", loss), ("chosen_rewards", chosen), ("rejected_rewards", rejected)):
        if t.dtype != inputs[0].dtype:
            return outcome("fail", Ev("{name} dtype is {dtype}, the inputs' is {expected}", name=name, dtype=str(t.dtype),
                                      expected=str(inputs[0].dtype)))  # fmt: skip
    return outcome("pass", Ev("a 0-dim loss and rewards [{b}] from a batch of {b}", b=b))


def numerical_check(ctx: Context, offset: int, beta: float, dtype=torch.float32, spread: float = 5.0, b: int = B):
    inputs = make_inputs(ctx, 100 + offset, b, spread, dtype)
    truth = reference([t.double() for t in inputs], beta)
    same = reference(inputs, beta)
    got = run(ctx, inputs, beta, b)
    labels = ("loss", "chosen_rewards", "rejected_rewards")
    what = Ev("beta={beta:g}, {dtype}", beta=beta, dtype=str(dtype)[6:])
    result = against_truth([(Ev("{name} ({what})", name=label, what=what), g, t, s) for label, g, t, s in zip(labels, got, truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def drawn_check(ctx: Context):
    """A batch size and beta drawn from the seed (never a fixed check's batch): a mean over a hard-coded B fails."""
    b, hundredths = ctx.sizes(500, (2, 24), (5, 90), avoid=(B, 5, 6, 4))
    result = numerical_check(ctx, 9, hundredths / 100, b=b)
    result.message = Ev("a configuration drawn from the seed (B={b}): {what}", b=b, what=result.message)
    return result


def gradient_check(ctx: Context):
    """d loss / d policy log-probs (the policy is what DPO trains)."""
    inputs = make_inputs(ctx, 200)
    leaves = [t.float().requires_grad_(i < 2) for i, t in enumerate(inputs)]
    loss = run(ctx, leaves, 0.5, B)[0]
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    if leaves[0].grad is None or leaves[1].grad is None:
        return outcome("fail", Ev("no gradient reaches the policy log-probs (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        refs = [t.float().to(precision).requires_grad_(i < 2) for i, t in enumerate(inputs)]
        (reference(refs, 0.5)[0] * 1.7).backward()
        grads.append((refs[0].grad, refs[1].grad))
    return against_truth([(Ev("d loss / d {name}", name="policy_chosen_logps"), leaves[0].grad, grads[0][0], grads[1][0]),
                          (Ev("d loss / d {name}", name="policy_rejected_logps"), leaves[1].grad, grads[0][1], grads[1][1])])  # fmt: skip


def examples_check(ctx: Context):
    """float64: example i's log-probs move rewards[i] only, and the loss by exactly its own term's change."""
    inputs = make_inputs(ctx, 300, 5)
    _, base_c, base_r = run(ctx, inputs, 0.1, 5)
    for i in range(5):
        moved = [t.clone() for t in inputs]
        moved[0][i] += 7.0
        moved[3][i] -= 3.0
        _, c, r = run(ctx, moved, 0.1, 5)
        for name, new, old in (("chosen_rewards", c, base_c), ("rejected_rewards", r, base_r)):
            change = (new.detach().double() - old.detach().double()).abs().nan_to_num(nan=float("inf"))
            change[i] = 0.0
            if (change > LEAK_THRESHOLD).any():
                j = int((change > LEAK_THRESHOLD).nonzero()[0])
                return outcome("fail", Ev("changing example {i}'s log-probs moved {name}[{j}] by {change:.3g} (float64): "
                                          "each example's reward comes from its own log-probs alone",
                                          i=i, name=name, j=j, change=change[j].item()))  # fmt: skip
    return outcome("pass", Ev("each example's rewards depend on its own log-probs alone (float64)"))


def large_margin_check(ctx: Context):
    """float32 margins of several hundred nats either way (beta = 1): log(sigmoid) underflows to -inf."""
    pc, pr, rc, rr = make_inputs(ctx, 400)
    gen = ctx.generator(401)
    margins = 400 * ctx.randn(B, gen=gen, dtype=torch.float64)
    margins[:2] = torch.tensor([-300.0, 250.0], dtype=torch.float64)
    inputs = [(pr + rc - rr + margins).float(), pr.float(), rc.float(), rr.float()]
    truth = reference([t.double() for t in inputs], 1.0)
    same = reference(inputs, 1.0)
    loss, chosen, rejected = run(ctx, inputs, 1.0, B)
    if first_nonfinite(loss, truth[0]) is not None:
        return outcome("fail", Ev("margins of several hundred (float32, beta=1) give a loss of {got}, expected {expected:.6g}: "
                                  "log(sigmoid(x)) underflows to log(0) for x below about -100", got=loss.item(), expected=truth[0].item()),
                       "dpo-unstable-logsigmoid")  # fmt: skip
    labels = ("loss", "chosen_rewards", "rejected_rewards")
    return against_truth([(Ev("{name} at margins ~±300 (float32)", name=label), g, t, s)
                          for label, g, t, s in zip(labels, (loss, chosen, rejected), truth, same)])  # fmt: skip


@dataclass(frozen=True)
class Probe:
    inputs: tuple
    beta: float

    def user(self, ctx: Context):
        ret = ctx.call(ctx.entry, *(t.clone() for t in self.inputs), beta=self.beta)
        if not (isinstance(ret, (tuple, list)) and len(ret) == 3 and all(isinstance(t, torch.Tensor) for t in ret)):
            return None
        return torch.cat([t.detach().double().reshape(-1) for t in ret])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct DPO loss" here.
        variant = variant if isinstance(variant, DPOVariant) else CORRECT_DPO
        return torch.cat([t.reshape(-1) for t in reference(self.inputs, self.beta, variant)])


HYPOTHESES = (
    ("dpo-sign-flipped", DPOVariant(sign=-1)),
    ("dpo-sign-flipped", DPOVariant(sign=-1, beta="outside")),
    ("dpo-beta-outside-logsigmoid", DPOVariant(beta="outside")),
)


class DPOTask:
    name = "dpo_loss"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("shape.batch", "shape", partial(shape_check, ctx, B)),
            CheckDef("shape.batch-1", "shape", partial(shape_check, ctx, 1)),
            CheckDef("numerical.beta-0.1", "numerical", partial(numerical_check, ctx, 0, 0.1)),
            CheckDef("numerical.beta-0.5", "numerical", partial(numerical_check, ctx, 1, 0.5)),
            CheckDef("numerical.policy-equals-reference", "numerical", partial(numerical_check, ctx, 2, 0.1, spread=0.0)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 3, 0.2, torch.float64)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(numerical_check, ctx, 4, 0.1, dt))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        inputs = make_inputs(ctx, 600, dtype=torch.float32)
        return defs + [
            CheckDef("gradient.policy-logps", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.examples", "mask-leak", partial(examples_check, ctx)),
            CheckDef("stability.large-margins", "stability", partial(large_margin_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, inputs, 0.1, B), dict(zip(NAMES, inputs)))),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(make_inputs(ctx, 1100, 6, 10.0), 0.5), Probe(make_inputs(ctx, 1101, 4, 20.0), 0.1)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = DPOTask()
