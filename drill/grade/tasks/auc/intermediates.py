"""What ``drill grade --trace`` compares the user's roc_auc against: 11 scores on a coarse grid (three tied values,
two of them shared by a positive and a negative), 4 positives and 7 negatives. The steps of the rank form (the
sort, the unique scores and their counts, the average ranks, the positives' rank sum, U) and of the counting form
(the sorted negatives, how many lie below each positive and how many tie with it, the wins plus half the ties),
then U / (P·N)."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

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
    steps = [("scores", scores), ("scores of the positives", scores[pos]), ("scores of the negatives", scores[~pos]), ("sorted scores", scores.sort().values), ("block of each sorted score", inverse[scores.argsort()]), ("unique scores", values), ("counts of each score", counts),
             ("last rank of each score", last), ("average rank of each score", average), ("ranks", ranks), ("ranks in sorted order", ranks[scores.argsort()]),
             ("ranks of the positives", ranks[pos]), ("rank sum of the positives", rank_sum), ("P (positives)", n_pos),
             ("N (negatives)", n_neg), ("P(P+1)/2", n_pos * (n_pos + 1) / 2), ("U = wins + ties / 2", u), ("P·N (pairs)", n_pos * n_neg),
             ("sorted negatives", negatives), ("negatives below each positive", below), ("negatives at or below each positive", at_or_below),
             ("ties of each positive", at_or_below - below), ("below + at or below, per positive", below + at_or_below),
             ("2·U (summed)", (below + at_or_below).sum()),
             ("wins + ties / 2 per positive", (below + at_or_below) / 2), ("output", u / (n_pos * n_neg))]  # fmt: skip
    zh = {"sorted scores": "排序后的分数", "block of each sorted score": "排序后每个分数所属的（相同分数）块",
          "ranks in sorted order": "按分数排序后的秩", "unique scores": "去重后的分数", "counts of each score": "每个分数出现的次数",
          "last rank of each score": "每个分数最后一个的秩", "average rank of each score": "每个分数的平均秩", "ranks": "每个样本的秩",
          "ranks of the positives": "正样本的秩", "rank sum of the positives": "正样本的秩和", "P (positives)": "P（正样本数）",
          "N (negatives)": "N（负样本数）", "U = wins + ties / 2": "U = 胜的对数 + 平局对数 / 2", "P·N (pairs)": "P·N（正负样本对数）",
          "sorted negatives": "排序后的负样本分数", "negatives below each positive": "每个正样本之下的负样本数",
          "ties of each positive": "每个正样本的平局数", "wins + ties / 2 per positive": "每个正样本的胜 + 平局 / 2", "scores": "scores（分数）",
          "scores of the positives": "正样本的分数", "scores of the negatives": "负样本的分数", "negatives at or below each positive": "每个正样本之下及与之相同的负样本数",
          "below + at or below, per positive": "每个正样本的（之下 + 之下及相同）负样本数", "2·U (summed)": "2·U（求和）"}  # fmt: skip
    return Case(ctx.entry, (scores, labels), steps, zh=zh, integers=True)
