"""What ``drill grade --trace`` compares the user's roc_auc against: 11 scores on a coarse grid (three tied values,
two of them shared by a positive and a negative), 4 positives and 7 negatives. The steps of the rank form (the
sort, the unique scores and their counts, the average ranks, the positives' rank sum, U) and of the counting form
(the sorted negatives, how many lie below each positive and how many tie with it, the wins plus half the ties),
then U / (P·N)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

SCORES = (0.5, -1.0, 2.0, 0.5, 1.5, -0.5, 0.5, 2.0, 3.0, -1.0, 1.0)
LABELS = (1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0)


def case(ctx) -> Case:
    scores = torch.tensor(SCORES, dtype=torch.float64)
    labels = torch.tensor(LABELS)
    pos = labels.bool()
    values, inverse, counts = torch.unique(scores, sorted=True, return_inverse=True, return_counts=True)
    last = counts.cumsum(0).double()
    average = last - (counts - 1) / 2
    ranks = average[inverse]
    n_pos = pos.sum().double()
    n_neg = len(pos) - n_pos
    rank_sum = ranks[pos].sum()
    u = rank_sum - n_pos * (n_pos + 1) / 2
    negatives = scores[~pos].sort().values
    below = torch.searchsorted(negatives, scores[pos])
    at_or_below = torch.searchsorted(negatives, scores[pos], right=True)
    steps = [(Ev("scores"), scores), (Ev("scores of the positives"), scores[pos]), (Ev("scores of the negatives"), scores[~pos]), (Ev("sorted scores"), scores.sort().values), (Ev("block of each sorted score"), inverse[scores.argsort()]), (Ev("unique scores"), values), (Ev("counts of each score"), counts),
             (Ev("last rank of each score"), last), (Ev("average rank of each score"), average), (Ev("rank of each sample"), ranks), (Ev("ranks in sorted order"), ranks[scores.argsort()]),
             (Ev("ranks of the positives"), ranks[pos]), (Ev("rank sum of the positives"), rank_sum), (Ev("P (positives)"), n_pos),
             (Ev("N (negatives)"), n_neg), ("P(P+1)/2", n_pos * (n_pos + 1) / 2), (Ev("U = wins + ties / 2"), u), (Ev("P·N (pairs)"), n_pos * n_neg),
             (Ev("sorted negatives"), negatives), (Ev("negatives below each positive"), below), (Ev("negatives at or below each positive"), at_or_below),
             (Ev("ties of each positive"), at_or_below - below), (Ev("below + at or below, per positive"), below + at_or_below),
             (Ev("2·U (summed)"), (below + at_or_below).sum()),
             (Ev("wins + ties / 2 per positive"), (below + at_or_below) / 2), ("output", u / (n_pos * n_neg))]  # fmt: skip
    return Case(ctx.entry, (scores, labels), steps, integers=True)
