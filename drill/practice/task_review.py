"""Whiteboard tasks as review items: one FSRS card per task, rated by the grader, not by the user.

The log is ``task_reviews`` (one row per rated whiteboard session); a card is the replay of
its task's rows through :data:`drill.practice.schedule.TASKS`, so nothing derived is stored and the
log can always be replayed. The rating follows how the session went:

* unsolved (time up, quit) → Again;
* solved after a hint or after two or more failing saves → Hard;
* solved otherwise → Good, or Easy when it took at most a third of the time limit.

A task is rated at most once per practice day: a second session the same day is practice,
not spaced review, and would otherwise push the card out on one afternoon's memory.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from drill.history import store, streak
from drill.practice.review import card_id, utc

if TYPE_CHECKING:  # fsrs is imported when a card is replayed, not to read an empty log
    from fsrs import Card, Rating

EASY_FRACTION = 1 / 3
HARD_AFTER_FAILING_SAVES = 2


@dataclass(frozen=True)
class Session:
    """What the grader saw of one whiteboard session."""

    task: str
    solved: bool
    hints: int
    failing_saves: int
    seconds: float
    limit_s: float


def rate(session: Session) -> Rating:
    from fsrs import Rating

    if not session.solved:
        return Rating.Again
    if session.hints or session.failing_saves >= HARD_AFTER_FAILING_SAVES:
        return Rating.Hard
    return Rating.Easy if session.seconds <= EASY_FRACTION * session.limit_s else Rating.Good


def _card_id(task: str) -> int:
    return card_id(f"task:{task}")  # never the id of a question's card


def record(conn: sqlite3.Connection, session: Session, now: datetime | None = None) -> Rating | None:
    """Log the session's rating; None (nothing written) when the task was already rated this practice day."""
    reviewed_at, local_time, offset = store.now_stamps(now)
    day_start = streak.settings(conn).day_start_hour
    today = streak.practice_day(local_time, day_start)
    rating = rate(session)
    with store.transaction(conn):
        for (earlier,) in conn.execute("SELECT local_time FROM task_reviews WHERE task = ? ORDER BY reviewed_at DESC LIMIT 1", (session.task,)):
            if streak.practice_day(earlier, day_start) == today:
                return None
        conn.execute(
            "INSERT INTO task_reviews (uid, task, rating, hints, failing_saves, seconds, limit_s, reviewed_at, local_time, utc_offset_min)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (uuid.uuid4().hex, session.task, int(rating), session.hints, session.failing_saves, round(session.seconds, 3),
             session.limit_s, reviewed_at, local_time, offset),
        )  # fmt: skip
    return rating


def cards(conn: sqlite3.Connection) -> dict[str, Card]:
    """Every reviewed task's card, replayed from the log (one pass, in time order)."""
    rows = conn.execute("SELECT task, rating, reviewed_at FROM task_reviews ORDER BY reviewed_at, id").fetchall()
    if not rows:
        return {}
    from fsrs import Card, Rating

    from drill.practice import schedule

    result: dict[str, Card] = {}
    for task, rating, reviewed_at in rows:
        when = utc(reviewed_at)
        card = result.get(task) or Card(card_id=_card_id(task), due=when)
        result[task], _ = schedule.TASKS.review_card(card, Rating(rating), review_datetime=when)
    return result


def due(conn: sqlite3.Connection, known: set[str], now: datetime | None = None) -> list[str]:
    """Tasks in ``known`` due at ``now``, most overdue first."""
    now = now or datetime.now(timezone.utc)
    found = {task: card.due for task, card in cards(conn).items() if task in known and card.due <= now}
    return sorted(found, key=lambda task: (found[task], task))


def next_due(conn: sqlite3.Connection, known: set[str], now: datetime | None = None) -> datetime | None:
    """When the next task in ``known`` falls due after ``now`` (None: no task has been reviewed)."""
    now = now or datetime.now(timezone.utc)
    return min((card.due for task, card in cards(conn).items() if task in known and card.due > now), default=None)


def intervals(conn: sqlite3.Connection, task: str, now: datetime | None = None) -> dict[Rating, timedelta]:
    """The next interval each rating would give ``task`` now (for the whiteboard's closing line)."""
    from fsrs import Card

    from drill.practice import schedule

    now = now or datetime.now(timezone.utc)
    card = cards(conn).get(task) or Card(card_id=_card_id(task), due=now)
    return schedule.preview(schedule.TASKS, card, now)
