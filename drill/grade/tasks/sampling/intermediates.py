"""What ``drill grade --trace`` compares the user's filter_logits against, exactly (its masks are bools): logits /
temperature, the top-k values, the k-th largest, the top-k cut; the probabilities, sorted, the mass before each
token, the cumulative sum, the top-p cut that keeps the token crossing top_p, scattered back; the output with
-inf. Sort-first code is named too (the scaled logits sorted, the top-k cut in sorted order). The stress input
is sample(logits, generator), when a check of sample failed: its softmax over the last dim."""

from __future__ import annotations

import math

import torch

from drill.grade.trace_match import Case
from drill.grade.user.wire import Generator

ROWS, VOCAB, TOP_K = 6, 9, 5  # no two sizes equal; top_k <= ROWS, so top-k over the rows runs (and is wrong)
TEMPERATURE, TOP_P = 0.7, 0.7
SEED = 79  # rows keep 2, 3, 2, 2, 3, 1 tokens; each cumulative sum >= 0.02 from top_p; each filter mutant keeps another set
SAMPLE_CHECKS = {"numerical.sample-distribution", "robustness.sample-uses-generator", "mask-leak.removed-never-drawn"}


def case(ctx) -> Case:
    logits = 2 * torch.randn(ROWS, VOCAB, generator=torch.Generator().manual_seed(SEED), dtype=torch.float64)
    scaled = logits / TEMPERATURE
    ordered, order = scaled.sort(dim=-1, descending=True)
    top = scaled.topk(TOP_K, dim=-1).values
    kth = top[..., -1:]
    topk_cut = scaled < kth
    topk_sorted = (torch.arange(VOCAB) >= TOP_K).expand(ROWS, VOCAB)
    filtered = scaled.masked_fill(topk_cut, -math.inf)
    probs = torch.softmax(filtered, dim=-1)
    sorted_probs = probs.gather(-1, order)
    cumulative = sorted_probs.cumsum(dim=-1)
    before = cumulative - sorted_probs
    topp_sorted = before >= TOP_P
    topp_sorted[..., 0] = False
    topp_cut = topp_sorted.scatter(-1, order, topp_sorted)
    # the top-k values and the k-th largest after the sorted cut, of which they are blocks; the mass before each token
    # before the cumulative sum, so that code computing it but comparing cumsum alone is named where it compares
    steps = [("logits", logits), ("logits / temperature", scaled), ("logits / temperature, sorted", ordered),
             ("removed by top-k, sorted", topk_sorted), ("top-k filtered, sorted", ordered.masked_fill(topk_sorted, -math.inf)),
             ("top-k values", top), ("k-th largest", kth), ("removed by top-k", topk_cut), ("kept by top-k", ~topk_cut),
             ("top-k filtered", filtered), ("probabilities", probs), ("sorted probabilities", sorted_probs),
             ("mass before each token", before), ("cumulative probability", cumulative),
             ("removed by top-p, sorted (the crossing token kept)", topp_sorted), ("kept by top-p, sorted", ~topp_sorted),
             ("removed by top-p", topp_cut), ("kept by top-p", ~topp_cut),
             ("output", filtered.masked_fill(topp_cut, -math.inf))]  # fmt: skip
    zh = {"logits / temperature": "logits / temperature（除以温度）", "logits / temperature, sorted": "logits / temperature（降序）",
          "top-k values": "top-k 的值", "k-th largest": "第 k 大的值", "removed by top-k": "top-k 删除的 token",
          "kept by top-k": "top-k 保留的 token", "removed by top-k, sorted": "top-k 删除的 token（降序位置）",
          "top-k filtered": "top-k 过滤后", "top-k filtered, sorted": "top-k 过滤后（降序）", "probabilities": "概率",
          "sorted probabilities": "降序排列的概率", "mass before each token": "每个 token 之前的累积概率", "cumulative probability": "累积概率",
          "removed by top-p, sorted (the crossing token kept)": "top-p 删除的 token（降序位置，越过 top_p 的那个保留）",
          "kept by top-p, sorted": "top-p 保留的 token（降序位置）", "removed by top-p": "top-p 删除的 token",
          "kept by top-p": "top-p 保留的 token"}  # fmt: skip
    factors = [(TEMPERATURE, "not divided by the temperature (it comes first)", "没有先除以温度（温度最先应用）"),
               (1 / TEMPERATURE, "divided by the temperature twice", "除了两次温度"),
               (TEMPERATURE**2, "multiplied by the temperature instead of dividing", "乘了温度，应为除以温度")]  # fmt: skip
    kwargs = {"temperature": TEMPERATURE, "top_k": TOP_K, "top_p": TOP_P}
    removing = tuple(name for name, _ in steps if name.startswith("removed by"))
    return Case(ctx.entry, (logits,), steps, kwargs=kwargs, exact=True, factors=factors, zh=zh, removing=removing)


def stress(ctx, failed: set[str]) -> list[Case]:
    """sample(logits, generator), when one of its checks failed (filter_logits traced clean): the probabilities it
    draws from, and the inverse-CDF route's cumulative sum and first uniforms. The ids themselves are not compared:
    multinomial, an inverse CDF, Gumbel-max draw different ids from the same generator, all correctly."""
    handle = ctx.user.entry("sample") if failed & SAMPLE_CHECKS else None
    if handle is None:
        return []
    logits = torch.randn(ROWS, VOCAB, generator=torch.Generator().manual_seed(SEED), dtype=torch.float64)
    probs = torch.softmax(logits, dim=-1)
    u = torch.rand(ROWS, 1, generator=torch.Generator().manual_seed(SEED), dtype=torch.float64)
    ids = torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(SEED)).flatten()
    steps = [("logits", logits), ("probabilities", probs), ("cumulative probability", probs.cumsum(dim=-1)),
             ("uniforms drawn from the generator", u), ("output", ids)]  # fmt: skip
    zh = {"probabilities": "概率", "cumulative probability": "累积概率",
          "uniforms drawn from the generator": "从 generator 抽出的均匀数"}  # fmt: skip
    label = ("sample(logits, generator)", "调用 sample(logits, generator) 函数")
    return [Case(handle, (logits, Generator(SEED)), steps, zh=zh, label=label)]
