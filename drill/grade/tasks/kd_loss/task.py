"""The ``kd_loss`` task: ``kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None)``.

Knowledge distillation (Hinton et al. 2015): per token, KL(p_teacher ‖ p_student) between the softmaxes at
temperature T, times T² so the gradient keeps its size as T changes; ``reverse=True`` gives KL(p_student ‖
p_teacher), the mode-seeking direction of on-policy distillation (MiniLLM, GKD), with the same T². The loss is
the mean over the tokens the bool ``mask`` counts (all of them without one). The reference is that formula in
float64 (and in the user's dtype for the tolerance rule); ``F.kl_div``, ``log_softmax`` and ``softmax`` are
allowed. The probes compare the loss and its gradient in the student's logits, at temperatures other than 1 and
with padding, so a missing T², a swapped direction or a padded mean each move them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, loss_probe, no_mutation_check, user_loss_grads
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev

B, T, V = 2, 5, 11
LOSS = Ev("loss")


@dataclass(frozen=True)
class KDVariant:
    direction: str = "right"  # right (correct) | swapped: each flag gives the other KL | forward / reverse: the flag ignored
    factor: str = "t2"  # t2 (correct) | none: no T² | t: times T
    log: str = "log"  # log (correct) | softmax: F.kl_div given probabilities, so the second argument's log is its probability
    temp: str = "both"  # both (correct) | teacher: only the teacher's logits divided by T
    mean: str = "tokens"  # tokens (correct) | all: masked sum / every position | unmasked: mean over every token | vocab: also ÷ V | batch: ÷ dim 0


CORRECT_KD = KDVariant()


def reference(student, teacher, temperature=1.0, reverse=False, mask=None, variant: KDVariant = CORRECT_KD):
    log_s = torch.log_softmax(student / (temperature if variant.temp == "both" else 1.0), dim=-1)
    log_t = torch.log_softmax(teacher / temperature, dim=-1)
    backwards = {"right": reverse, "swapped": not reverse, "forward": False, "reverse": True}[variant.direction]
    first, second = (log_s, log_t) if backwards else (log_t, log_s)
    inner = second.exp() if variant.log == "softmax" else second
    per_token = (first.exp() * (first - inner)).sum(-1) * {"t2": temperature**2, "none": 1.0, "t": temperature}[variant.factor]
    m = torch.ones_like(per_token) if mask is None else mask.to(per_token.dtype)
    total = (per_token * m).sum()
    return {"tokens": total / m.sum(), "all": total / m.numel(), "unmasked": per_token.mean(),
            "vocab": total / (m.sum() * student.shape[-1]), "batch": total / student.shape[0]}[variant.mean]  # fmt: skip


def make_inputs(ctx: Context, offset: int, shape=(B, T, V), masked: bool = True, spread: float = 2.0, dtype=torch.float64):
    """Student and teacher logits (correlated, as after some training) and a right-padding mask, every row with a token."""
    gen = ctx.generator(offset)
    teacher = spread * ctx.randn(*shape, gen=gen, dtype=torch.float64)
    student = 0.6 * teacher + spread * ctx.randn(*shape, gen=gen, dtype=torch.float64)
    mask = None
    if masked:
        lead = shape[:-1]
        lengths = torch.randint(1, lead[-1] + 1, lead[:-1], generator=gen)
        lengths.view(-1)[0] = lead[-1]
        mask = (torch.arange(lead[-1]) < lengths[..., None]).to(ctx.device)
    return student.to(dtype), teacher.to(dtype), mask


def run(ctx: Context, student, teacher, mask, **kwargs):
    if mask is not None:
        kwargs["mask"] = mask
    out = tensor_result(ctx.call(ctx.entry, student, teacher, **kwargs), LOSS)
    expect_shape(out, (), LOSS)
    return out


def shape_check(ctx: Context, shape, masked: bool):
    student, teacher, mask = make_inputs(ctx, 1, shape, masked, dtype=torch.float32)
    out = run(ctx, student, teacher, mask, temperature=2.0)
    if out.dtype != student.dtype:
        return outcome("fail", Ev("loss dtype is {dtype}, the logits' is {expected}", dtype=str(out.dtype), expected=str(student.dtype)))
    if masked:
        return outcome("pass", Ev("a 0-dim loss from logits {shape} and a mask", shape=list(shape)))
    return outcome("pass", Ev("a 0-dim loss from logits {shape}", shape=list(shape)))


def numerical_check(ctx: Context, offset: int, shape=(B, T, V), masked: bool = True, dtype=torch.float32, **kwargs):
    student, teacher, mask = make_inputs(ctx, 100 + offset, shape, masked)
    truth = reference(student, teacher, mask=mask, **kwargs)
    same = reference(student.to(dtype), teacher.to(dtype), mask=mask, **kwargs)
    settings = [Ev("{name}={value}", name=k, value=v) for k, v in kwargs.items()]
    what = Ev.seq([Ev("logits {shape}", shape=list(shape)), *settings, *([Ev("a mask")] if masked else []), str(dtype)[6:]], ", ")
    result = against_truth([(Ev("loss ({what})", what=what), run(ctx, student.to(dtype), teacher.to(dtype), mask, **kwargs), truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context, reverse: bool):
    """d loss / d student_logits (the student is what distillation trains), at T = 2 with padding."""
    student, teacher, mask = make_inputs(ctx, 200 + reverse)
    leaf = student.float().requires_grad_()
    loss = run(ctx, leaf, teacher.float(), mask, temperature=2.0, reverse=reverse)
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches the student's logits (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        ref_leaf = student.float().to(precision).requires_grad_()
        (reference(ref_leaf, teacher.float().to(precision), 2.0, reverse, mask) * 1.7).backward()
        grads.append(ref_leaf.grad)
    return against_truth([(Ev("d loss / d student_logits (reverse={reverse})", reverse=reverse), leaf.grad, *grads)])


def masked_leak_check(ctx: Context):
    """float64: the logits of masked-out tokens move neither the loss nor get a gradient."""
    student, teacher, mask = make_inputs(ctx, 300, (3, 6, V))
    leaf = student.clone().requires_grad_()
    base = run(ctx, leaf, teacher, mask, temperature=2.0)
    ctx.call(lambda: base.backward(), watch=False)
    gen = ctx.generator(301)
    moved_s, moved_t = student.clone(), teacher.clone()
    hidden = int((~mask).sum())
    moved_s[~mask] += 3 * ctx.randn(hidden, V, gen=gen, dtype=torch.float64)
    moved_t[~mask] -= 3 * ctx.randn(hidden, V, gen=gen, dtype=torch.float64)
    change = (run(ctx, moved_s, moved_t, mask, temperature=2.0) - base).abs().item()
    if change > 1e-12 * max(1.0, abs(base.item())):
        return outcome("fail", Ev("changing the logits of the {n} masked-out tokens moved the loss by {change:.3g} (float64): "
                                  "a token the mask drops must not reach the loss", n=hidden, change=change), "kd-masked-tokens-in-mean")  # fmt: skip
    if leaf.grad is not None and leaf.grad[~mask].abs().max().item() != 0:
        return outcome("fail", Ev("a masked-out token's logits get a non-zero gradient"), "kd-masked-tokens-in-mean")
    return outcome("pass", Ev("the {n} masked-out tokens never reach the loss or its gradient (float64)", n=hidden))


def large_logits_check(ctx: Context):
    """float32 logits around ±300 (T = 1): log(softmax) underflows to -inf, exp by hand overflows."""
    student, teacher, mask = make_inputs(ctx, 400, spread=120.0)
    student, teacher = student + 200, teacher - 100
    truth = reference(student, teacher, mask=mask)
    same = reference(student.float(), teacher.float(), mask=mask)
    out = run(ctx, student.float(), teacher.float(), mask)
    if first_nonfinite(out, truth) is not None:
        return outcome("fail", Ev("logits of a few hundred (float32) give a loss of {got}, expected {expected:.6g}: "
                                  "log(softmax(x)) is log(0) for the unlikely tokens", got=out.item(), expected=truth.item()),
                       "kd-unstable-log-softmax")  # fmt: skip
    return against_truth([(Ev("loss at logits of a few hundred (float32)"), out, truth, same)])


@dataclass(frozen=True)
class Probe:
    """float64; the loss followed by its gradient in the student's logits (times the token count)."""

    student: torch.Tensor
    teacher: torch.Tensor
    mask: torch.Tensor | None
    kwargs: tuple

    def user(self, ctx: Context):
        leaf = self.student.clone().requires_grad_()
        extra = {} if self.mask is None else {"mask": self.mask.clone()}
        found = user_loss_grads(ctx, ctx.entry, [leaf], self.teacher.clone(), **dict(self.kwargs), **extra)
        return None if found is None else loss_probe(*found, self.tokens)

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct distillation loss" here.
        variant = variant if isinstance(variant, KDVariant) else CORRECT_KD
        leaf = self.student.clone().requires_grad_()
        loss = reference(leaf, self.teacher, mask=self.mask, variant=variant, **dict(self.kwargs))
        return loss_probe(loss, torch.autograd.grad(loss, leaf), self.tokens)

    @property
    def tokens(self) -> int:
        return self.student[..., 0].numel() if self.mask is None else int(self.mask.sum())


HYPOTHESES = (
    ("kd-kl-direction-swapped", KDVariant(direction="swapped")),
    ("kd-kl-direction-swapped", KDVariant(direction="forward")),
    ("kd-kl-direction-swapped", KDVariant(direction="reverse")),
    ("kd-missing-t-squared", KDVariant(factor="none")),
    ("kd-missing-t-squared", KDVariant(factor="t")),
    ("kd-softmax-not-log-softmax", KDVariant(log="softmax")),
    ("kd-temperature-one-side", KDVariant(temp="teacher")),
    ("kd-masked-tokens-in-mean", KDVariant(mean="all")),
    ("kd-masked-tokens-in-mean", KDVariant(mean="unmasked")),
    ("kd-wrong-reduction", KDVariant(mean="vocab")),
    ("kd-wrong-reduction", KDVariant(mean="batch")),
)


class KDLossTask:
    name = "kd_loss"

    def checks(self, ctx: Context) -> list[CheckDef]:
        b, t, v = ctx.sizes(50, (2, 5), (3, 9), (6, 40), avoid=(4, 8, 16, 32))
        defs = [
            CheckDef("shape.3d-masked", "shape", partial(shape_check, ctx, (B, T, V), True)),
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (9, V), False)),
            CheckDef("numerical.defaults", "numerical", partial(numerical_check, ctx, 0, masked=False)),
            CheckDef("numerical.temperature-2", "numerical", partial(numerical_check, ctx, 1, temperature=2.0)),
            CheckDef("numerical.reverse", "numerical", partial(numerical_check, ctx, 2, temperature=1.5, reverse=True)),
            CheckDef("numerical.reverse-t1-2d", "numerical", partial(numerical_check, ctx, 3, (7, V), False, reverse=True)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, 4, (b, t, v), temperature=3.0)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 5, dtype=torch.float64, temperature=4.0, reverse=True)),
        ]
        for dtype in ctx.dtypes[1:]:
            defs.append(CheckDef(dtype_id("numerical", dtype), "numerical", partial(numerical_check, ctx, 6, dtype=dtype, temperature=2.0)))
        student, teacher, mask = make_inputs(ctx, 600, dtype=torch.float32)
        return defs + [
            CheckDef("gradient.student-forward", "gradient", partial(gradient_check, ctx, False)),
            CheckDef("gradient.student-reverse", "gradient", partial(gradient_check, ctx, True)),
            CheckDef("mask-leak.masked-tokens", "mask-leak", partial(masked_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, student, teacher, mask, temperature=2.0),
                             {"student_logits": student, "teacher_logits": teacher, "mask": mask})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        s1, t1, m1 = make_inputs(ctx, 1100, (3, 4, 7))
        s2, t2, m2 = make_inputs(ctx, 1101, (2, 6, 5))
        s3, t3, _ = make_inputs(ctx, 1102, (5, 9), masked=False)
        return [Probe(s1, t1, m1, (("temperature", 2.0),)), Probe(s2, t2, m2, (("temperature", 1.5), ("reverse", True))),
                Probe(s3, t3, None, (("temperature", 3.0),))]  # fmt: skip

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = KDLossTask()
