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
from drill.text.messages import Ev

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
    steps = [("logits", logits), (Ev("logits / temperature"), scaled), (Ev("logits / temperature, sorted"), ordered),
             (Ev("removed by top-k, sorted"), topk_sorted),
             (Ev("top-k filtered, sorted"), ordered.masked_fill(topk_sorted, -math.inf)),
             (Ev("top-k values"), top), (Ev("k-th largest"), kth), (Ev("removed by top-k"), topk_cut),
             (Ev("kept by top-k"), ~topk_cut), (Ev("top-k filtered"), filtered), (Ev("probabilities"), probs),
             (Ev("sorted probabilities"), sorted_probs), (Ev("mass before each token"), before),
             (Ev("cumulative probability"), cumulative),
             (Ev("removed by top-p, sorted (the crossing token kept)"), topp_sorted),
             (Ev("kept by top-p, sorted"), ~topp_sorted), (Ev("removed by top-p"), topp_cut), (Ev("kept by top-p"), ~topp_cut),
             ("output", filtered.masked_fill(topp_cut, -math.inf))]  # fmt: skip
    factors = [(TEMPERATURE, Ev("not divided by the temperature (it comes first)")),
               (1 / TEMPERATURE, Ev("divided by the temperature twice")),
               (TEMPERATURE**2, Ev("multiplied by the temperature instead of dividing"))]  # fmt: skip
    kwargs = {"temperature": TEMPERATURE, "top_k": TOP_K, "top_p": TOP_P}
    removing = tuple(name for name, _ in steps if name.startswith("removed by"))  # shown as is: the steps so named
    return Case(ctx.entry, (logits,), steps, kwargs=kwargs, exact=True, factors=factors, removing=removing)


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
    steps = [("logits", logits), (Ev("probabilities"), probs), (Ev("cumulative probability"), probs.cumsum(dim=-1)),
             (Ev("uniforms drawn from the generator"), u), ("output", ids)]  # fmt: skip
    return [Case(handle, (logits, Generator(SEED)), steps, label=Ev("sample(logits, generator)"))]
