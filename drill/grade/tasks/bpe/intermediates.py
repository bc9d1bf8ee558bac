"""What ``drill grade --trace`` compares the user's train_bpe and encode against, value by value.

train_bpe("aaab ab aaab éaab ", 4): the UTF-8 bytes (é is two), then per merge the pair counts, the best pair
(no ties on this text, so both tie rules agree), the merges so far and the ids after it. The first merge is
(a, a) over "aaa": a merge that also takes the overlapping window shows at once. encode(RANKED_TEXT, RANKED):
the ranks, then per step the pair counts, the present pair of lowest rank and the ids after merging it; on
this text the lowest-rank pair is neither the most frequent nor the first in the text.
"""

from __future__ import annotations

from drill.grade.tasks.bpe.task import ENTRY_ENCODE, RANKED, RANKED_TEXT, initial_ids, merge, pair_counts
from drill.grade.trace_values import ValueCase

TEXT, MERGES = "aaab ab aaab éaab ", 4


def plural(n: int) -> str:
    return f"{n} merge" + ("s" if n != 1 else "")


def train_steps(text: str, n: int) -> list[tuple[str, object]]:
    ids, merges = initial_ids(text), []
    steps = [("ids after 0 merges", ids)]
    for k in range(n):
        counts = pair_counts(ids)
        best = max(counts, key=counts.get)
        merges = [*merges, best]
        ids = merge(ids, best, 256 + k)
        steps += [(f"pair counts, merge {k + 1}", counts), (f"best pair, merge {k + 1}", best),
                  (f"merges after {plural(k + 1)}", merges), (f"ids after {plural(k + 1)}", ids)]  # fmt: skip
    return [*steps, ("output", merges)]


def encode_steps(text: str, merges) -> list[tuple[str, object]]:
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = initial_ids(text)
    steps = [("ranks", ranks), ("ids after 0 merges", ids)]
    j = 0
    while len(ids) >= 2:
        counts = pair_counts(ids)
        present = [p for p in counts if p in ranks]
        if not present:
            steps.append((f"pair counts, step {j + 1}", counts))  # none of them has a merge: the end
            break
        j += 1
        pair = min(present, key=ranks.get)
        ids = merge(ids, pair, 256 + ranks[pair])
        steps += [(f"pair counts, step {j}", counts), (f"lowest-rank pair, step {j}", pair), (f"ids after {plural(j)}", ids)]
    return [*steps, ("output", ids)]


def chinese(steps) -> dict[str, str]:
    words = {
        name: zh
        for name, zh in (("ids after 0 merges", "ids（尚未合并）"), ("ranks", "ranks（合并的先后）"))
        if name in dict(steps)
    }
    for name, _ in steps:
        number = "".join(c for c in name if c.isdigit())
        if name.startswith("pair counts, merge"):
            words[name] = f"第 {number} 次合并的 pair 计数"
        elif name.startswith("pair counts, step"):
            words[name] = f"第 {number} 步的 pair 计数"
        elif name.startswith("best pair"):
            words[name] = f"第 {number} 次合并的最佳 pair"
        elif name.startswith("merges after"):
            words[name] = f"前 {number} 次合并的 merges"
        elif name.startswith("ids after") and number != "0":
            words[name] = f"{number} 次合并后的 ids"
        elif name.startswith("lowest-rank pair"):
            words[name] = f"第 {number} 步 rank 最小的 pair"
    return words


def case(ctx) -> list[ValueCase]:
    train, call = train_steps(TEXT, MERGES), f"`train_bpe({TEXT!r}, {MERGES})`"
    cases = [ValueCase(ctx.entry, (TEXT, MERGES), train, zh=chinese(train), label=(call, f"{call} 训练"))]
    encoder = ctx.user.entry(ENTRY_ENCODE)
    if encoder is not None:
        steps, call = encode_steps(RANKED_TEXT, RANKED), f"`encode({RANKED_TEXT!r}, merges)`"
        cases.append(ValueCase(encoder, (RANKED_TEXT, [tuple(p) for p in RANKED]), steps, zh=chinese(steps),
                               label=(f"{call} ({len(RANKED)} merges)", f"{call}（{len(RANKED)} 条合并）")))  # fmt: skip
    return cases
