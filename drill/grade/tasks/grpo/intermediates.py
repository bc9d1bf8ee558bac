"""What ``drill grade --trace`` compares the user's grpo_loss against: B = 2 prompts of G = 3 completions, L = 5
tokens, completions of 5, 3, 1, 4, 2 and 5 tokens; clip_eps = 0.15 and beta = 0.2 (neither a default, so a hard-coded
one shows); ratios on both sides of the clip range, none within 1e-2 of its edges. The steps: the k3 KL, the group
mean and std of the rewards, the advantages, the ratio, its clip (or its cap on the advantage's side), both
surrogates (and their negatives, the loss form) and their min, the per-token loss, masked, summed per completion and
over the batch, and the mean over the valid tokens.

The KL steps come right after the inputs: a wrong line made from logps and ref_logps is compared with them first.
"""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, G, L = 2, 3, 5  # 6 completions: no two sizes equal
LENGTHS = (5, 3, 1, 4, 2, 5)
CLIP, BETA = 0.15, 0.2


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    n = B * G
    logps = -1.5 + 0.5 * torch.randn(n, L, generator=gen, dtype=torch.float64)
    delta = 0.3 * torch.randn(n, L, generator=gen, dtype=torch.float64)
    edges = torch.tensor([math.log(1 - CLIP), math.log(1 + CLIP)], dtype=torch.float64)
    old = logps - torch.where((delta[..., None] - edges).abs().amin(-1) < 1e-2, delta + 3e-2, delta)
    ref = logps + 0.3 * torch.randn(n, L, generator=gen, dtype=torch.float64)
    rewards = torch.randn(B, G, generator=gen, dtype=torch.float64)
    mask = torch.arange(L)[None, :] < torch.tensor(LENGTHS)[:, None]
    d = ref - logps
    kl = torch.exp(d) - d - 1
    mean, std = rewards.mean(1, keepdim=True), rewards.std(1, keepdim=True)
    adv = (rewards - mean) / (std + 1e-4)
    a = adv.reshape(n, 1)
    ratio = torch.exp(logps - old)
    clipped = ratio.clamp(1 - CLIP, 1 + CLIP)
    objective = torch.min(ratio * a, clipped * a)
    per_token = -(objective - BETA * kl)
    masked = per_token * mask
    steps = [(Ev("logps"), logps), ("old_logps", old), ("ref_logps", ref), (Ev("rewards"), rewards),
             (Ev("d = ref_logps - logps"), d), ("exp(d)", torch.exp(d)), ("kl = exp(d) - d - 1", kl), ("β·kl", BETA * kl),
             (Ev("group mean of rewards"), mean), (Ev("group std of rewards"), std), (Ev("r - mean"), rewards - mean),
             ("std + 1e-4", std + 1e-4), (Ev("advantages"), adv),
             (Ev("logps - old_logps"), logps - old), (Ev("ratio = exp(logps - old_logps)"), ratio), (Ev("clipped ratio"), clipped),
             (Ev("ratio capped on the advantage's side"), torch.where(a >= 0, ratio.clamp(max=1 + CLIP), ratio.clamp(min=1 - CLIP))),
             (Ev("ratio·A"), ratio * a), (Ev("clip(ratio)·A"), clipped * a), (Ev("-ratio·A"), -ratio * a), (Ev("-clip(ratio)·A"), -clipped * a),
             (Ev("objective = min(ratio·A, clip(ratio)·A)"), objective), (Ev("-objective"), -objective),
             (Ev("objective - β·kl"), objective - BETA * kl), (Ev("per-token loss"), per_token), (Ev("masked per-token loss"), masked),
             (Ev("per-token loss at the valid tokens"), per_token[mask]), (Ev("masked loss summed per completion"), masked.sum(1)),
             (Ev("sum over the valid tokens"), masked.sum()), ("output", masked.sum() / mask.sum())]  # fmt: skip
    factors = [(math.sqrt((G - 1) / G), Ev("the biased std (÷ G); torch.std divides by G - 1 = {g}", g=G - 1)),
               (sum(LENGTHS) / mask.numel(), Ev("divided by every position, padding included"))]  # fmt: skip
    args = (logps, old, ref, rewards, mask)
    return Case(ctx.entry, args, steps, kwargs={"clip_eps": CLIP, "beta": BETA}, factors=factors)
