"""What ``drill grade --trace`` compares the user's compute_gae against: T = 6 steps of 3 environments, episodes
ending at steps 2 (env 0) and 4 (env 1), none in env 2; γ = 0.9 and λ = 0.8 (neither a default, so a hard-coded one
shows). The steps: 1 - dones, the bootstrap γV_{t+1}(1 - d_t), the TD errors, the discounted carry γλ(1 - d_t)A_{t+1},
each step's row of them, the advantages and the returns. When a ppo_clip_loss check failed (GAE traced
clean), the loss is traced on 3 sequences of 5 tokens, clip_eps = 0.15: the ratio, its clip, both surrogates (and their
negatives), their min, masked, summed and averaged over the valid tokens.
"""

from __future__ import annotations

import math

import torch

from drill.grade.tasks.ppo.task import ENTRY_LOSS, LOSS_CHECKS
from drill.grade.trace_match import Case
from drill.text.messages import Ev

T, E = 6, 3
GAMMA, LAM = 0.9, 0.8
CLIP = 0.15


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    rewards = torch.randn(T, E, generator=gen, dtype=torch.float64)
    values = torch.randn(T + 1, E, generator=gen, dtype=torch.float64)
    dones = torch.zeros(T, E, dtype=torch.bool)
    dones[2, 0] = dones[4, 1] = True
    keep = 1.0 - dones.double()
    boot = GAMMA * values[1:] * keep
    deltas = rewards + boot - values[:-1]
    adv, carry = torch.zeros_like(rewards), torch.zeros(T, E, dtype=torch.float64)
    last = torch.zeros(E, dtype=torch.float64)
    for t in reversed(range(T)):
        carry[t] = GAMMA * LAM * keep[t] * last
        last = deltas[t] + carry[t]
        adv[t] = last
    steps = [(Ev("rewards"), rewards), (Ev("values"), values), (Ev("A = 0 before the recursion"), torch.zeros(T, E, dtype=torch.float64)), (Ev("1 - dones"), keep), ("γ·V[t+1]", GAMMA * values[1:]),
             ("γ·V[t+1]·(1 - d)", boot), ("r + γ·V[t+1]·(1 - d)", rewards + boot), (Ev("δ = TD errors"), deltas),
             ("γλ·(1 - d)", GAMMA * LAM * keep), ("γλ·(1 - d)·A[t+1]", carry)]  # fmt: skip
    for t in reversed(range(T)):  # a loop's rows: a step of their own each (a row of a [T, E] step does not match it)
        written = torch.where(torch.arange(T)[:, None] >= t, adv, 0.0)  # an [T, E] buffer filled from the end
        steps += [(f"γ·V[{t + 1}]·(1 - d[{t}])", boot[t]), (f"δ[{t}]", deltas[t]), (f"γλ·(1 - d[{t}])·A[{t + 1}]", carry[t]), (f"A[{t}]", adv[t]),
                  (Ev("A[{t}:] written", t=t), written)]  # fmt: skip
    steps += [("output", adv), (Ev("returns"), adv + values[:-1])]
    factors = [(1 / LAM, Ev("λ left out of the recursion"))]
    return Case(ctx.entry, (rewards, values, dones, GAMMA, LAM), steps, factors=factors, returned=("output", "returns"))


def stress(ctx, failed: set[str]) -> list[Case]:
    """ppo_clip_loss(logp, old_logp, advantages, clip_eps, mask), when one of its checks failed."""
    handle = ctx.user.entry(ENTRY_LOSS) if failed & LOSS_CHECKS else None
    if handle is None:
        return []
    gen = torch.Generator().manual_seed(8)
    logp = -1.5 + 0.5 * torch.randn(3, 5, generator=gen, dtype=torch.float64)
    delta = 0.3 * torch.randn(3, 5, generator=gen, dtype=torch.float64)
    edges = torch.tensor([math.log(1 - CLIP), math.log(1 + CLIP)], dtype=torch.float64)
    old = logp - torch.where((delta[..., None] - edges).abs().amin(-1) < 1e-2, delta + 3e-2, delta)
    adv = torch.randn(3, 5, generator=gen, dtype=torch.float64)
    mask = torch.arange(5)[None, :] < torch.tensor([5, 3, 4])[:, None]
    ratio = torch.exp(logp - old)
    clipped = ratio.clamp(1 - CLIP, 1 + CLIP)
    objective = torch.min(ratio * adv, clipped * adv)
    masked = -objective * mask
    steps = [(Ev("logp"), logp), ("old_logp", old), (Ev("advantages"), adv), (Ev("logp - old_logp"), logp - old), (Ev("ratio"), ratio),
             (Ev("clipped ratio"), clipped), (Ev("ratio·A"), ratio * adv), (Ev("clip(ratio)·A"), clipped * adv), (Ev("-ratio·A"), -ratio * adv),
             (Ev("-clip(ratio)·A"), -clipped * adv), (Ev("objective = min(ratio·A, clip(ratio)·A)"), objective), (Ev("-objective"), -objective),
             (Ev("masked loss"), masked), (Ev("sum over the valid tokens"), masked.sum()), ("output", masked.sum() / mask.sum())]  # fmt: skip
    label = Ev("ppo_clip_loss(logp, old_logp, advantages, clip_eps={clip}, mask)", clip=CLIP)
    return [Case(handle, (logp, old, adv), steps, kwargs={"clip_eps": CLIP, "mask": mask}, label=label)]
