"""What ``drill grade --trace`` compares the user's kd_loss against: B = 2 sequences of T = 3 tokens over V = 7 classes,
the second sequence one token shorter (mask), temperature 2 (so a missing T² or a student left at T = 1 shows), the
forward direction. The steps: the logits over T, each side's max and log-sum-exp, the log-probabilities and
probabilities, the log-ratio, the per-class KL terms, the per-token KL, times T², masked, summed, the token count and
the mean."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, T, V, TEMP = 2, 3, 7, 2.0

LARGE = Ev("logits thousands apart (log-probabilities below -745)")


def case(ctx, large: bool = False) -> Case:
    gen = torch.Generator().manual_seed(7)
    teacher = 2 * torch.randn(B, T, V, generator=gen, dtype=torch.float64)
    student = 0.6 * teacher + 2 * torch.randn(B, T, V, generator=gen, dtype=torch.float64)
    if large:
        student, teacher = 1000 * student, 1000 * teacher
    mask = torch.tensor([[True, True, True], [True, True, False]])
    s, t = student / TEMP, teacher / TEMP
    log_s, log_t = s.log_softmax(-1), t.log_softmax(-1)
    terms = log_t.exp() * (log_t - log_s)
    kl = terms.sum(-1)
    scaled = kl * TEMP**2
    masked = scaled * mask
    steps = [(Ev("student_logits"), student), (Ev("teacher_logits"), teacher), (Ev("student logits / T"), s),
             (Ev("teacher logits / T"), t), (Ev("student row max"), s.amax(-1, keepdim=True)),
             (Ev("teacher row max"), t.amax(-1, keepdim=True)), (Ev("student log-sum-exp"), s.logsumexp(-1, keepdim=True)),
             (Ev("teacher log-sum-exp"), t.logsumexp(-1, keepdim=True)),
             (Ev("student log-probabilities"), log_s), (Ev("teacher log-probabilities"), log_t),
             (Ev("student probabilities"), log_s.exp()), (Ev("teacher probabilities"), log_t.exp()),
             (Ev("log p_teacher - log p_student"), log_t - log_s), (Ev("KL terms p_t·(log p_t - log p_s)"), terms),
             (Ev("KL terms at the counted tokens"), terms[mask]), (Ev("masked KL terms"), terms * mask[..., None]),
             (Ev("per-token KL"), kl), (Ev("per-token KL · T²"), scaled),
             (Ev("masked per-token KL"), masked), (Ev("KL at the counted tokens"), scaled[mask]),
             (Ev("sum over the counted tokens"), masked.sum()), (Ev("number of counted tokens"), mask.sum().double()),
             ("output", masked.sum() / mask.sum())]  # fmt: skip
    if large:  # the probabilities of the unlikely classes are 0 there: keep what is finite
        steps = [(name, x) for name, x in steps if torch.isfinite(x).all()]
    factors = [(1 / TEMP**2, Ev("the T² factor left out")), (1 / TEMP, Ev("multiplied by T instead of T²")),
               (mask.sum().item() / mask.numel(), Ev("divided by every position, masked ones included")),
               (1 / V, Ev("divided by the vocabulary size too (reduction='mean')")),
               (mask.sum().item() / B, Ev("divided by the batch size, not the token count (reduction='batchmean')"))]  # fmt: skip
    return Case(ctx.entry, (student, teacher), steps, kwargs={"temperature": TEMP, "mask": mask}, factors=factors,
                label=LARGE if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Logits thousands apart when the large-logits check failed: log(softmax(x)) is log(0) there even in float64."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
