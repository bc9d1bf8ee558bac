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
from drill.text.messages import Ev

TEXT, MERGES = "aaab ab aaab éaab ", 4  # shown as is: the input text
NO_MERGE = Ev("ids after 0 merges")


def ids_after(n: int) -> Ev:
    if n == 0:
        return NO_MERGE
    return Ev("ids after {n} merge", n=n) if n == 1 else Ev("ids after {n} merges", n=n)


def merges_after(n: int) -> Ev:
    return Ev("merges after {n} merge", n=n) if n == 1 else Ev("merges after {n} merges", n=n)


def train_steps(text: str, n: int) -> list[tuple[str, object]]:
    ids, merges = initial_ids(text), []
    steps = [(NO_MERGE, ids)]
    for k in range(n):
        counts = pair_counts(ids)
        best = max(counts, key=counts.get)
        merges = [*merges, best]
        ids = merge(ids, best, 256 + k)
        steps += [(Ev("pair counts, merge {n}", n=k + 1), counts), (Ev("best pair, merge {n}", n=k + 1), best),
                  (merges_after(k + 1), merges), (ids_after(k + 1), ids)]  # fmt: skip
    return [*steps, ("output", merges)]


def encode_steps(text: str, merges) -> list[tuple[str, object]]:
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = initial_ids(text)
    steps = [(Ev("ranks"), ranks), (NO_MERGE, ids)]
    j = 0
    while len(ids) >= 2:
        counts = pair_counts(ids)
        present = [p for p in counts if p in ranks]
        if not present:
            steps.append((Ev("pair counts, step {n}", n=j + 1), counts))  # none of them has a merge: the end
            break
        j += 1
        pair = min(present, key=ranks.get)
        ids = merge(ids, pair, 256 + ranks[pair])
        steps += [(Ev("pair counts, step {n}", n=j), counts), (Ev("lowest-rank pair, step {n}", n=j), pair), (ids_after(j), ids)]
    return [*steps, ("output", ids)]


def case(ctx) -> list[ValueCase]:
    label = Ev("`train_bpe({text}, {merges})`", text=repr(TEXT), merges=MERGES)
    cases = [ValueCase(ctx.entry, (TEXT, MERGES), train_steps(TEXT, MERGES), label=label)]
    encoder = ctx.user.entry(ENTRY_ENCODE)
    if encoder is not None:
        label = Ev("`encode({text}, merges)` ({n} merges)", text=repr(RANKED_TEXT), n=len(RANKED))
        cases.append(ValueCase(encoder, (RANKED_TEXT, [tuple(p) for p in RANKED]), encode_steps(RANKED_TEXT, RANKED), label=label))
    return cases
