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
    steps = [("logps", logps), ("old_logps", old), ("ref_logps", ref), ("rewards", rewards),
             ("d = ref_logps - logps", d), ("exp(d)", torch.exp(d)), ("kl = exp(d) - d - 1", kl), ("β·kl", BETA * kl),
             ("group mean of rewards", mean), ("group std of rewards", std), ("r - mean", rewards - mean),
             ("std + 1e-4", std + 1e-4), ("advantages", adv),
             ("logps - old_logps", logps - old), ("ratio = exp(logps - old_logps)", ratio), ("clipped ratio", clipped),
             ("ratio capped on the advantage's side", torch.where(a >= 0, ratio.clamp(max=1 + CLIP), ratio.clamp(min=1 - CLIP))),
             ("ratio·A", ratio * a), ("clip(ratio)·A", clipped * a), ("-ratio·A", -ratio * a), ("-clip(ratio)·A", -clipped * a),
             ("objective = min(ratio·A, clip(ratio)·A)", objective), ("-objective", -objective),
             ("objective - β·kl", objective - BETA * kl), ("per-token loss", per_token), ("masked per-token loss", masked),
             ("per-token loss at the valid tokens", per_token[mask]), ("masked loss summed per completion", masked.sum(1)),
             ("sum over the valid tokens", masked.sum()), ("output", masked.sum() / mask.sum())]  # fmt: skip
    factors = [(math.sqrt((G - 1) / G), f"the biased std (÷ G); torch.std divides by G - 1 = {G - 1}",
                f"用了有偏标准差（除以 G）；torch.std 除以 G - 1 = {G - 1}"),
               (sum(LENGTHS) / mask.numel(), "divided by every position, padding included", "除以了全部位置数，padding 也算进去了")]  # fmt: skip
    zh = {"logps": "logps（当前策略的 log-prob）", "rewards": "rewards（奖励）", "d = ref_logps - logps": "对数比 d = ref_logps - logps",
          "r - mean": "r - 组内均值", "logps - old_logps": "对数比 logps - old_logps", "ratio = exp(logps - old_logps)": "比率 ratio = exp(logps - old_logps)",
          "ratio·A": "ratio·A（未裁剪项）", "clip(ratio)·A": "clip(ratio)·A（裁剪项）", "-ratio·A": "-ratio·A（未裁剪项取负）",
          "-clip(ratio)·A": "-clip(ratio)·A（裁剪项取负）", "objective = min(ratio·A, clip(ratio)·A)": "目标 objective = min(ratio·A, clip(ratio)·A)",
          "-objective": "-objective（目标取负）", "objective - β·kl": "objective - β·kl（减去 KL 惩罚）",
          "group mean of rewards": "组内奖励均值", "group std of rewards": "组内奖励标准差", "advantages": "优势 advantages",
          "clipped ratio": "裁剪后的 ratio", "ratio capped on the advantage's side": "只在优势方向一侧裁剪的 ratio", "per-token loss": "每个 token 的 loss", "masked per-token loss": "乘上 mask 的每 token loss",
          "per-token loss at the valid tokens": "有效 token 处的每 token loss", "masked loss summed per completion": "每个回答的 masked loss 之和",
          "sum over the valid tokens": "所有有效 token 的 loss 之和", "output": "输出：有效 token 上的平均 loss"}  # fmt: skip
    return Case(
        ctx.entry, (logps, old, ref, rewards, mask), steps, kwargs={"clip_eps": CLIP, "beta": BETA}, factors=factors, zh=zh
    )
