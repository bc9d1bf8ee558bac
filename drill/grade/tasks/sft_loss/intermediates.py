"""What ``drill grade --trace`` compares the user's sft_loss against: B = 3 rows of T = 6 positions, V = 5 classes;
prompts of 2, 1 and 3 tokens and right padding (-100 in the labels), no num_items_in_batch. The steps: the shifted
logits and labels, the log-probabilities, each counted label's negative log-likelihood, masked, their sum, the count
of counted tokens and the mean. A stress input traces build_labels when one of its checks failed: the positions,
the prompt and padding masks and the labels.
"""

from __future__ import annotations

import torch

from drill.grade.tasks.sft_loss.task import ENTRY_LABELS, LABEL_CHECKS
from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, T, V = 3, 6, 5
PROMPTS, ENDS = (2, 1, 3), (6, 4, 5)


LARGE = Ev("logits around 1e3, spread ~300, each label the least likely class")
ITEMS = 40  # num_items_in_batch of the accumulation stress input: more than this batch's counted tokens
PROMPT_AT, PADDING_AT, EITHER = Ev("prompt positions"), Ev("padding positions"), Ev("prompt or padding")  # True: removed


def case(ctx, large: bool = False, items: int | None = None) -> Case:
    """``large``: logits ~1000 (exp overflows, softmax underflows); ``items``: num_items_in_batch given."""
    gen = torch.Generator().manual_seed(7)
    logits = 2 * torch.randn(B, T, V, generator=gen, dtype=torch.float64)
    logits = 1000 + 150 * logits if large else logits
    labels = torch.randint(V, (B, T), generator=gen)
    pos = torch.arange(T)[None, :]
    labels = labels.masked_fill((pos < torch.tensor(PROMPTS)[:, None]) | (pos >= torch.tensor(ENDS)[:, None]), -100)
    if large:  # each counted label the least likely class: log p far below -745, where exp(log p) is 0 in float64
        labels[:, 1:] = torch.where(labels[:, 1:] == -100, -100, logits[:, :-1].argmin(-1))
    lg, lb = logits[:, :-1], labels[:, 1:]
    valid = lb != -100
    logp = torch.log_softmax(lg, dim=-1)
    nll = -logp.gather(-1, torch.where(valid, lb, 0)[..., None]).squeeze(-1)
    masked = nll * valid
    count = valid.sum() if items is None else torch.tensor(items)
    steps = [("logits", logits), (Ev("shifted logits"), lg), (Ev("row max"), lg.amax(-1, keepdim=True)),
             ("log-sum-exp", torch.logsumexp(lg, -1, keepdim=True)), (Ev("log-probabilities"), logp),
             (Ev("-log p[next label]"), nll), (Ev("losses of counted tokens"), masked), (Ev("losses per sequence"), masked.sum(1)),
             (Ev("sum of losses"), masked.sum()), (Ev("counted tokens"), count.double()), ("output", masked.sum() / count)]  # fmt: skip
    factors = [(B * (T - 1) / int(count), Ev("divided by every position, -100 ones included"))]
    if items is not None:
        factors = [(ITEMS / int(valid.sum()), Ev("divided by this micro-batch's counted tokens, not by num_items_in_batch"))]
        label = Ev("num_items_in_batch={items} (gradient accumulation)", items=ITEMS)
        return Case(ctx.entry, (logits, labels), steps, kwargs={"num_items_in_batch": ITEMS}, factors=factors, label=label)
    return Case(ctx.entry, (logits, labels), steps, factors=factors, label=LARGE if large else None)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Large logits, num_items_in_batch given, and build_labels(input_ids, prompt_lens, pad_id): each when its checks failed."""
    found = [case(ctx, large=True)] if "stability.large-logits" in failed else []
    if failed & {"numerical.num-items-int", "numerical.num-items-tensor", "numerical.accumulation"}:
        found.append(case(ctx, items=ITEMS))
    handle = ctx.user.entry(ENTRY_LABELS) if failed & LABEL_CHECKS else None
    if handle is None:
        return found
    pad = 0
    ids = torch.randint(1, 30, (B, T), generator=torch.Generator().manual_seed(7))
    pos = torch.arange(T)[None, :]
    ids = ids.masked_fill(pos >= torch.tensor(ENDS)[:, None], pad)
    prompt_lens = torch.tensor(PROMPTS)
    prompt = pos < prompt_lens[:, None]
    padding = ids == pad
    steps = [("input_ids", ids), ("prompt_lens", prompt_lens), (Ev("positions"), pos), (PROMPT_AT, prompt), (PADDING_AT, padding),
             (EITHER, prompt | padding), ("output", ids.masked_fill(prompt | padding, -100))]  # fmt: skip
    label = Ev("build_labels(input_ids, prompt_lens, pad_id)")
    return found + [Case(handle, (ids, prompt_lens, pad), steps, exact=True, all_data=True, integers=True, label=label,
                         removing=(PROMPT_AT, PADDING_AT, EITHER))]
