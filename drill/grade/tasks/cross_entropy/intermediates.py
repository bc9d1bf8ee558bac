"""What ``drill grade --trace`` compares the user's cross_entropy against: the row max, log-sum-exp, the
log-probabilities, each target's negative log-likelihood, label smoothing (ε = 0.1), the mask of ignored targets, the mean."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, T, V, SMOOTHING = 2, 3, 7, 0.1  # 6 rows of 7 classes; two targets ignored


LARGE = Ev("logits around 1e3, spread ~300, each target the least likely class")


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, logits ~1000 spread ~300 (exp overflows float64, softmax underflows to 0)."""
    gen = torch.Generator().manual_seed(7)
    logits = 3 * torch.randn(B, T, V, generator=gen, dtype=torch.float64)
    targets = torch.randint(V, (B, T), generator=gen)
    if large:
        logits = 1000 + 100 * logits
        targets = logits.argmin(-1)  # log p far below -745: exp(log p) is 0 in float64
    targets[0, 1] = targets[1, 2] = -100
    flat = logits.reshape(-1, V)
    row_max = flat.amax(-1, keepdim=True)
    lse = (flat - row_max).exp().sum(-1, keepdim=True).log() + row_max
    logp = flat - lse
    valid = targets.reshape(-1) != -100
    nll = -logp.gather(-1, torch.where(valid, targets.reshape(-1), 0)[:, None]).squeeze(-1)
    uniform = -logp.mean(-1)
    kept = ((1 - SMOOTHING) * nll + SMOOTHING * uniform) * valid
    steps = [("logits", flat), (Ev("row max"), row_max), ("logits - max", flat - row_max), ("exp", (flat - row_max).exp()),
             (Ev("sum of exp"), (flat - row_max).exp().sum(-1, keepdim=True)), (Ev("probabilities"), logp.exp()),
             ("log-sum-exp", lse), (Ev("log-probabilities"), logp), (Ev("-log p[target]"), nll),
             (Ev("-mean log p (smoothing)"), uniform), ("(1 - ε)·nll", (1 - SMOOTHING) * nll), (Ev("ε·smoothing"), SMOOTHING * uniform),
             (Ev("smoothed losses"), (1 - SMOOTHING) * nll + SMOOTHING * uniform), (Ev("losses of kept targets"), kept),
             (Ev("sum of losses"), kept.sum()), ("output", kept.sum() / valid.sum())]  # fmt: skip
    return Case(ctx.entry, (logits, targets), steps, kwargs={"label_smoothing": SMOOTHING}, label=LARGE if large else None)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Large logits when the large-logits check failed: a log of a softmax, or a log-sum-exp without the max, breaks there."""
    return [case(ctx, large=True)] if "stability.large-logits" in failed else []
