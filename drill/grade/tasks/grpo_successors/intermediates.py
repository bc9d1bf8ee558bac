"""What ``drill grade --trace`` compares the user's dapo_loss against: one group of G = 4 completions of 5, 3, 1 and 4
tokens (T = 5), eps_low = 0.15 and eps_high = 0.35 (neither a default, so a hard-coded one shows), ratios on both
sides of the range, none within 1e-2 of its edges. The steps: the log-ratio, the ratio, its clip, both surrogates (and
their negatives), their min, masked, summed per completion and over the group, the valid tokens and the mean. When a
gspo_loss check failed (dapo traced clean), gspo_loss is traced on the same group, eps = 0.2: the masked log-ratio,
its sum per completion, the lengths, the mean log-ratio, the sequence ratio, its clip, both surrogates, their min.
"""

from __future__ import annotations

import math

import torch

from drill.grade.tasks.grpo_successors.task import ENTRY_GSPO, GSPO_CHECKS
from drill.grade.trace_match import Case
from drill.text.messages import Ev

G, T = 4, 5
LENGTHS = (5, 3, 1, 4)
LOW, HIGH, EPS = 0.15, 0.35, 0.2


def inputs():
    gen = torch.Generator().manual_seed(7)
    logp = -1.5 + 0.5 * torch.randn(G, T, generator=gen, dtype=torch.float64)
    delta = 0.3 * torch.randn(G, T, generator=gen, dtype=torch.float64)
    edges = torch.tensor([math.log(1 - LOW), math.log(1 + HIGH), math.log(1 - EPS), math.log(1 + EPS)], dtype=torch.float64)
    old = logp - torch.where((delta[..., None] - edges).abs().amin(-1) < 1e-2, delta + 3e-2, delta)
    adv = torch.randn(G, generator=gen, dtype=torch.float64)
    mask = torch.arange(T)[None, :] < torch.tensor(LENGTHS)[:, None]
    return logp, old, adv, mask


def surrogate_steps(ratio, clipped, a):
    objective = torch.min(ratio * a, clipped * a)
    return objective, [(Ev("ratio·A"), ratio * a), (Ev("clip(ratio)·A"), clipped * a), (Ev("-ratio·A"), -ratio * a),
                       (Ev("-clip(ratio)·A"), -clipped * a), (Ev("objective = min(ratio·A, clip(ratio)·A)"), objective),
                       (Ev("-objective"), -objective)]  # fmt: skip


def case(ctx) -> Case:
    logp, old, adv, mask = inputs()
    a = adv[:, None]
    ratio = torch.exp(logp - old)
    clipped = ratio.clamp(1 - LOW, 1 + HIGH)
    objective, surrogates = surrogate_steps(ratio, clipped, a)
    masked = -objective * mask
    steps = [(Ev("logp"), logp), ("old_logp", old), (Ev("advantages"), adv), (Ev("logp - old_logp"), logp - old), (Ev("ratio"), ratio),
             (Ev("clipped ratio"), clipped), *surrogates, (Ev("masked loss"), masked),
             (Ev("masked loss summed per completion"), masked.sum(1)), (Ev("sum over the valid tokens"), masked.sum()),
             (Ev("valid tokens"), mask.sum().double()), ("output", masked.sum() / mask.sum())]  # fmt: skip
    factors = [(T * G / sum(LENGTHS), Ev("divided by every position, padding included"))]
    return Case(ctx.entry, (logp, old, adv, mask), steps, kwargs={"eps_low": LOW, "eps_high": HIGH}, factors=factors)


def stress(ctx, failed: set[str]) -> list[Case]:
    """gspo_loss on the same group, when one of its checks failed."""
    handle = ctx.user.entry(ENTRY_GSPO) if failed & GSPO_CHECKS else None
    if handle is None:
        return []
    logp, old, adv, mask = inputs()
    diff = (logp - old) * mask
    lengths = mask.sum(1).double()
    mean = diff.sum(1) / lengths
    ratio = mean.exp()
    clipped = ratio.clamp(1 - EPS, 1 + EPS)
    objective, surrogates = surrogate_steps(ratio, clipped, adv)
    steps = [(Ev("logp"), logp), ("old_logp", old), (Ev("advantages"), adv), (Ev("logp - old_logp"), logp - old),
             (Ev("masked log-ratio"), diff), (Ev("log-ratio summed per completion"), diff.sum(1)), (Ev("completion lengths"), lengths),
             (Ev("mean log-ratio per completion"), mean), (Ev("sequence ratio"), ratio), (Ev("clipped ratio"), clipped), *surrogates,
             ("output", -objective.mean())]  # fmt: skip
    factors = [(T / l, Ev("averaged over every position, padding included")) for l in sorted(set(LENGTHS)) if l != T]
    label = Ev("gspo_loss(logp, old_logp, advantages, mask, eps={eps})", eps=EPS)
    return [Case(handle, (logp, old, adv, mask), steps, kwargs={"eps": EPS}, factors=factors, label=label)]
