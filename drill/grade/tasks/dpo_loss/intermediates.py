"""What ``drill grade --trace`` compares the user's dpo_loss against (β = 0.3, so a hard-coded 0.1 shows): the
policy and reference log-ratios, the margin, β·margin, the per-pair -log σ (by logsigmoid, softplus or the
stable max/log1p form), the mean, and both rewards."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, BETA = 5, 0.3


LARGE = Ev("margins of ±1e4 (β·margin around ±3000)")


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, margins of ±1e4, where log σ and exp(-z) by hand break in float64 too."""
    gen = torch.Generator().manual_seed(7)
    pc, pr, rc, rr = (-30 + 5 * torch.randn(B, generator=gen, dtype=torch.float64) for _ in range(4))
    if large:
        pc = pr + rc - rr + 1e4 * torch.tensor([-1.0, 1.0, -0.5, 0.8, -1.2], dtype=torch.float64)
    policy, ref = pc - pr, rc - rr
    margin = policy - ref
    z = BETA * margin
    losses = -F.logsigmoid(z)
    steps = [("policy_chosen_logps", pc), ("policy_rejected_logps", pr), ("ref_chosen_logps", rc),
             ("ref_rejected_logps", rr), (Ev("policy log-ratio"), policy), (Ev("reference log-ratio"), ref),
             (Ev("chosen log-ratio (policy - reference)"), pc - rc), (Ev("rejected log-ratio (policy - reference)"), pr - rr),
             ("margin", margin), ("z = β·margin", z), ("-z", -z), ("exp(-z)", torch.exp(-z)), ("σ(z)", torch.sigmoid(z)),
             ("log σ(z)", F.logsigmoid(z)), ("max(-z, 0)", (-z).clamp(min=0)), ("min(z, 0)", z.clamp(max=0)), ("-|z|", -z.abs()), ("exp(-|z|)", torch.exp(-z.abs())),
             ("log(1 + exp(-|z|))", torch.log1p(torch.exp(-z.abs()))), (Ev("-log σ(z), per pair"), losses),
             (Ev("mean log σ(z)"), F.logsigmoid(z).mean()), (Ev("sum of losses"), losses.sum()), ("output", losses.mean()),
             ("chosen_rewards", BETA * (pc - rc)),
             ("rejected_rewards", BETA * (pr - rr))]  # fmt: skip
    if large:  # exp(-z) is inf there: no step to match, so the user's overflowing exp is where the trace stops
        steps = [(name, t) for name, t in steps if torch.isfinite(t).all()]
    return Case(
        ctx.entry,
        (pc, pr, rc, rr),
        steps,
        kwargs={"beta": BETA},
        returned=("output", "chosen_rewards", "rejected_rewards"),
        label=LARGE if large else None,
    )


def stress(ctx, failed: set[str]) -> list[Case]:
    """Margins of ±1e4 when the large-margins check failed: log(sigmoid(z)) and log1p(exp(-z)) break there."""
    return [case(ctx, large=True)] if "stability.large-margins" in failed else []
