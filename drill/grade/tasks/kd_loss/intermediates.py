"""What ``drill grade --trace`` compares the user's kd_loss against: B = 2 sequences of T = 3 tokens over V = 7 classes,
the second sequence one token shorter (mask), temperature 2 (so a missing T² or a student left at T = 1 shows), the
forward direction. The steps: the logits over T, each side's max and log-sum-exp, the log-probabilities and
probabilities, the log-ratio, the per-class KL terms, the per-token KL, times T², masked, summed, the token count and
the mean."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

B, T, V, TEMP = 2, 3, 7, 2.0

LARGE = ("logits thousands apart (log-probabilities below -745)", "logits 相差数千（对数概率低于 -745）")


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
    steps = [("student_logits", student), ("teacher_logits", teacher), ("student logits / T", s), ("teacher logits / T", t),
             ("student row max", s.amax(-1, keepdim=True)), ("teacher row max", t.amax(-1, keepdim=True)),
             ("student log-sum-exp", s.logsumexp(-1, keepdim=True)), ("teacher log-sum-exp", t.logsumexp(-1, keepdim=True)),
             ("student log-probabilities", log_s), ("teacher log-probabilities", log_t),
             ("student probabilities", log_s.exp()), ("teacher probabilities", log_t.exp()),
             ("log p_teacher - log p_student", log_t - log_s), ("KL terms p_t·(log p_t - log p_s)", terms),
             ("KL terms at the counted tokens", terms[mask]), ("masked KL terms", terms * mask[..., None]),
             ("per-token KL", kl), ("per-token KL · T²", scaled),
             ("masked per-token KL", masked), ("KL at the counted tokens", scaled[mask]),
             ("sum over the counted tokens", masked.sum()), ("number of counted tokens", mask.sum().double()),
             ("output", masked.sum() / mask.sum())]  # fmt: skip
    if large:  # the probabilities of the unlikely classes are 0 there: keep what is finite
        steps = [(name, x) for name, x in steps if torch.isfinite(x).all()]
    zh = {"student_logits": "student_logits（学生 logits）", "teacher_logits": "teacher_logits（教师 logits）",
          "student logits / T": "学生 logits / T", "teacher logits / T": "教师 logits / T", "student row max": "学生 logits 的行最大值",
          "teacher row max": "教师 logits 的行最大值", "student log-sum-exp": "学生的 log-sum-exp", "teacher log-sum-exp": "教师的 log-sum-exp",
          "student log-probabilities": "学生的对数概率", "teacher log-probabilities": "教师的对数概率",
          "student probabilities": "学生的概率", "teacher probabilities": "教师的概率",
          "log p_teacher - log p_student": "对数比 log p_teacher - log p_student", "KL terms p_t·(log p_t - log p_s)": "KL 的各项 p_t·(log p_t - log p_s)",
          "per-token KL": "每个 token 的 KL", "per-token KL · T²": "每个 token 的 KL 乘 T²", "KL terms at the counted tokens": "计入的 token 上的 KL 各项",
          "masked KL terms": "乘上 mask 的 KL 各项",
          "masked per-token KL": "乘上 mask 的每 token KL", "KL at the counted tokens": "计入的 token 上的 KL",
          "sum over the counted tokens": "计入 token 的 KL 之和", "number of counted tokens": "计入的 token 数"}  # fmt: skip
    zh = {name: text for name, text in zh.items() if name in dict(steps)}
    factors = [(1 / TEMP**2, "the T² factor left out", "漏乘了 T²"), (1 / TEMP, "multiplied by T instead of T²", "乘的是 T 而不是 T²"),
               (mask.sum().item() / mask.numel(), "divided by every position, masked ones included", "除以了全部位置数，被 mask 的也算进去了"),
               (1 / V, "divided by the vocabulary size too (reduction='mean')", "还除以了词表大小（reduction='mean'）"),
               (mask.sum().item() / B, "divided by the batch size, not the token count (reduction='batchmean')", "除以的是 batch 大小而不是 token 数（reduction='batchmean'）")]  # fmt: skip
    return Case(ctx.entry, (student, teacher), steps, kwargs={"temperature": TEMP, "mask": mask}, zh=zh, factors=factors,
                label=LARGE if large else None)  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """Logits thousands apart when the large-logits check failed: log(softmax(x)) is log(0) there even in float64."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
