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

B, T, V = 3, 6, 5
PROMPTS, ENDS = (2, 1, 3), (6, 4, 5)


LARGE = ("logits around 1e3, spread ~300, each label the least likely class", "各类分数在 1e3 量级、彼此相差约 300，标签都是最不可能的类")
ITEMS = 40  # num_items_in_batch of the accumulation stress input: more than this batch's counted tokens


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
    steps = [("logits", logits), ("shifted logits", lg), ("row max", lg.amax(-1, keepdim=True)),
             ("log-sum-exp", torch.logsumexp(lg, -1, keepdim=True)), ("log-probabilities", logp),
             ("-log p[next label]", nll), ("losses of counted tokens", masked), ("losses per sequence", masked.sum(1)),
             ("sum of losses", masked.sum()), ("counted tokens", count.double()), ("output", masked.sum() / count)]  # fmt: skip
    factors = [(B * (T - 1) / int(count), "divided by every position, -100 ones included", "除以了全部位置数，-100 的位置也算进去了")]
    zh = {"shifted logits": "错位后的 logits（去掉最后一个位置）", "row max": "行最大值", "log-probabilities": "对数概率",
          "-log p[next label]": "下一个 token 标签的 -log p", "losses of counted tokens": "计入的 token 的损失",
          "losses per sequence": "每条序列的损失之和", "sum of losses": "损失之和", "counted tokens": "计入的 token 数"}  # fmt: skip
    if items is not None:
        factors = [(ITEMS / int(valid.sum()), "divided by this micro-batch's counted tokens, not by num_items_in_batch",
                    "除以了本 micro-batch 自己的 token 数，而不是 num_items_in_batch")]  # fmt: skip
        label = (f"num_items_in_batch={ITEMS} (gradient accumulation)", f"num_items_in_batch={ITEMS}（梯度累积）")
        return Case(ctx.entry, (logits, labels), steps, kwargs={"num_items_in_batch": ITEMS}, factors=factors, zh=zh, label=label)
    return Case(ctx.entry, (logits, labels), steps, factors=factors, zh=zh, label=LARGE if large else None)


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
    steps = [("input_ids", ids), ("prompt_lens", prompt_lens), ("positions", pos), ("prompt positions", prompt), ("padding positions", padding),
             ("prompt or padding", prompt | padding), ("output", ids.masked_fill(prompt | padding, -100))]  # fmt: skip
    zh = {"positions": "位置编号", "prompt positions": "prompt 所在的位置", "padding positions": "padding 所在的位置", "prompt or padding": "prompt 或 padding 的位置"}
    label = ("build_labels(input_ids, prompt_lens, pad_id)", "调用 build_labels(input_ids, prompt_lens, pad_id) 函数")
    removing = ("prompt positions", "padding positions", "prompt or padding")
    return found + [Case(handle, (ids, prompt_lens, pad), steps, exact=True, all_data=True, integers=True, zh=zh, label=label,
                         removing=removing)]
