"""Spaced review with FSRS, derived entirely from the attempt log.

``review_state`` is only a cache: each card is the replay of that question's
attempts through a fuzz-free scheduler, so it can be rebuilt at any time with the
same result. It is rebuilt when a row is missing, was written by another fsrs
version (the card JSON format may change), or is behind the log (an attempt
recorded by a process that did not update it). No review history is ever lost.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timezone
from importlib.metadata import version

from fsrs import Card, Rating, Scheduler

from drill import mistakes, store

STATE_FORMAT = 1  # bump when the way cards are derived from the log changes
SCHEDULER_TAG = f"fsrs {version('fsrs')}/{STATE_FORMAT}"

_scheduler = Scheduler(enable_fuzzing=False)  # no fuzz: a replay must reproduce the same card


def _when(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp)
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def _card_id(question_id: str) -> int:
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:6], "big")


def replay(question_id: str, log: list[tuple[str, int]]) -> Card:
    """The card after reviewing ``question_id`` with each ``(answered_at, rating)`` of ``log`` in order."""
    card = Card(card_id=_card_id(question_id), due=_when(log[0][0]) if log else None)
    for answered_at, rating in log:
        card, _ = _scheduler.review_card(card, Rating(rating), review_datetime=_when(answered_at))
    return card


def rebuild(conn: sqlite3.Connection, question_id: str) -> None:
    """Recompute one question's card from its attempts (inside the caller's transaction)."""
    log = [
        (r[0], r[1])
        for r in conn.execute("SELECT answered_at, rating FROM attempts WHERE question_id = ? ORDER BY answered_at, id", (question_id,))
    ]
    if not log:
        conn.execute("DELETE FROM review_state WHERE question_id = ?", (question_id,))
        return
    card = replay(question_id, log)
    conn.execute(
        "INSERT OR REPLACE INTO review_state (question_id, card, due, scheduler) VALUES (?, ?, ?, ?)",
        (question_id, card.to_json(), card.due.astimezone(timezone.utc).isoformat(timespec="seconds"), SCHEDULER_TAG),
    )


def _latest_answers(conn: sqlite3.Connection) -> dict[str, str]:
    """When each question was last answered (UTC ISO text)."""
    return dict(conn.execute("SELECT question_id, MAX(answered_at) FROM attempts GROUP BY question_id").fetchall())


def _stale(conn: sqlite3.Connection, latest: dict[str, str]) -> list[str]:
    stale = []
    for qid, last in latest.items():
        row = conn.execute("SELECT card, scheduler FROM review_state WHERE question_id = ?", (qid,)).fetchone()
        try:
            fresh = row is not None and row[1] == SCHEDULER_TAG and Card.from_json(row[0]).last_review == _when(last)
        except (ValueError, KeyError, TypeError):
            fresh = False
        if not fresh:
            stale.append(qid)
    return stale


def sync(conn: sqlite3.Connection, latest: dict[str, str] | None = None) -> list[str]:
    """Rebuild every card that is missing, from another format, or behind the log; return their ids."""
    stale = _stale(conn, _latest_answers(conn) if latest is None else latest)
    if stale:
        with store.transaction(conn):
            for qid in stale:
                rebuild(conn, qid)
    return stale


def due_dates(conn: sqlite3.Connection) -> dict[str, datetime]:
    """When each practised or nudged question is next due (after bringing the cache up to date).

    A failing grade run linked to a question (see drill.mistakes) makes it due at the run's
    time until the question is answered after it; this is read from the log, never stored.
    """
    answered = _latest_answers(conn)
    sync(conn, answered)
    dates = {r[0]: _when(r[1]) for r in conn.execute("SELECT question_id, due FROM review_state")}
    for qid, run_at in mistakes.nudges(conn).items():
        nudged = _when(run_at)
        if qid not in answered or _when(answered[qid]) < nudged:
            dates[qid] = min(dates.get(qid, nudged), nudged)
    return dates


def due_now(conn: sqlite3.Connection, known: set[str], now: datetime | None = None) -> list[str]:
    """Ids in ``known`` due at ``now``, most overdue first."""
    now = now or datetime.now(timezone.utc)
    dates = due_dates(conn)
    return sorted((qid for qid, due in dates.items() if qid in known and due <= now), key=lambda qid: (dates[qid], qid))
