"""Fit FSRS's parameters to the user's own question reviews (``drill review --optimize``).

fsrs's Optimizer (the ``fsrs[optimizer]`` extra: torch, pandas, tqdm) learns only from reviews
made at least a day after the same card's previous review, among each card's first 64, and keeps
its defaults until there are 512 of them (one mini-batch): we count them the same way, so the
user knows how many are still needed before anything is fitted. The fitted weights go to the
``fsrs-parameters`` setting; the review cache's tag follows them, so every card is replayed.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from importlib.util import find_spec

from drill.practice import review
from drill.history import store
from drill.errors import DrillError

MIN_REVIEWS = 512  # fsrs.optimizer's mini_batch_size: below it, compute_optimal_parameters returns the defaults
MAX_SEQ_LEN = 64  # fsrs.optimizer's max_seq_len: only each card's first 64 reviews are used
EXTRA = "pip install 'llm-drill[optimize]'"


@dataclass(frozen=True)
class Fit:
    reviews: int  # reviews the optimizer learns from
    parameters: list[float] | None  # None: not enough reviews yet

    @property
    def needed(self) -> int:
        return max(0, MIN_REVIEWS - self.reviews)


def _logs(conn: sqlite3.Connection) -> dict[str, list[tuple[str, int]]]:
    """Each question's usable (answered_at, rating) in time order, in one pass over the attempts."""
    by_question: dict[str, list[tuple[str, int]]] = {}
    for qid, answered_at, rating in conn.execute("SELECT question_id, answered_at, rating FROM attempts ORDER BY question_id, answered_at, id"):
        by_question.setdefault(qid, []).append((answered_at, rating))
    return {qid: usable for qid, log in by_question.items() if (usable := review._usable(log))}


def countable(logs: dict[str, list[tuple[str, int]]]) -> int:
    """Reviews a day or more after the same question's previous review, within its first 64."""
    total = 0
    for log in logs.values():
        times = [review.utc(stamp) for stamp, _ in log[:MAX_SEQ_LEN]]
        total += sum(later - earlier >= timedelta(days=1) for earlier, later in zip(times, times[1:]))
    return total


def optimize(conn: sqlite3.Connection) -> Fit:
    """Fit and store the parameters when there are enough reviews; else say how many there are."""
    logs = _logs(conn)
    reviews = countable(logs)
    if reviews < MIN_REVIEWS:
        return Fit(reviews, None)
    missing = [name for name in ("torch", "pandas", "tqdm") if find_spec(name) is None]
    if missing:
        raise DrillError("--optimize needs fsrs's optimizer ({missing} not installed): {how}", missing=", ".join(missing), how=EXTRA)
    from fsrs import Optimizer, Rating, ReviewLog

    entries = [ReviewLog(card_id=review.card_id(qid), rating=Rating(rating), review_datetime=review.utc(stamp), review_duration=None)
               for qid, log in logs.items() for stamp, rating in log]  # fmt: skip
    weights = list(Optimizer(entries).compute_optimal_parameters())
    from drill import config

    config.set_value(conn, "fsrs-parameters", json.dumps(weights))
    review.sync(conn)  # the new tag makes every card stale: replay them now, once
    return Fit(reviews, weights)
