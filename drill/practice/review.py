"""Spaced review with FSRS, derived entirely from the attempt log.

``review_state`` is only a cache: each card is the replay of that question's
attempts through a fuzz-free scheduler, so it can be rebuilt at any time with the
same result. It is rebuilt when a row is missing, was written by another fsrs
version (the card JSON format may change), or is behind the log (an attempt
recorded by a process that did not update it). A new answer on a current card is
one scheduler step, which gives the replay's card without reading the whole log.
No review history is ever lost.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING

from drill.practice import mistakes
from drill.history import store

if TYPE_CHECKING:
    from fsrs import Card, Scheduler

STATE_FORMAT = 1  # bump when the way cards are derived from the log changes


def fsrs_version() -> str:
    """fsrs's installed version, from the one dist-info folder beside it, found without importing fsrs (today's plan
    only reads cached cards): importlib.metadata would scan every distribution on sys.path, ~15 ms of every start-up."""
    spec = PathFinder.find_spec("fsrs")
    locations = list(spec.submodule_search_locations or []) if spec else []
    found = list(Path(locations[0]).parent.glob("fsrs-*.dist-info")) if len(locations) == 1 else []
    if len(found) == 1:
        return found[0].name.removeprefix("fsrs-").removesuffix(".dist-info")
    from importlib.metadata import version  # an egg, a zip, two copies: ask the slow way

    return version("fsrs")


@lru_cache(maxsize=1)
def scheduler_tag() -> str:
    """The tag of cards replayed with FSRS's default parameters."""
    return f"fsrs {fsrs_version()}/{STATE_FORMAT}"


@dataclass(frozen=True)
class Current:
    """The parameters questions are scheduled with now (None: FSRS's defaults), and the tag their cached cards
    must carry to be up to date. The scheduler is built on first use: reading due dates needs none."""

    parameters: tuple[float, ...] | None
    tag: str

    @property
    def scheduler(self) -> Scheduler:
        return _scheduler(self.parameters)


@lru_cache(maxsize=4)
def _scheduler(parameters: tuple[float, ...] | None) -> Scheduler:
    from drill.practice import schedule  # fuzz-free: a replay must reproduce the same card

    return schedule.QUESTIONS if parameters is None else schedule.questions(parameters)


@lru_cache(maxsize=4)
def _fitted(weights: str) -> Current:
    import hashlib

    return Current(tuple(json.loads(weights)), f"{scheduler_tag()}/w{hashlib.sha256(weights.encode()).hexdigest()[:12]}")


def current(conn: sqlite3.Connection) -> Current:
    """FSRS's defaults, or the user's fitted parameters (config fsrs-parameters, drill review --optimize): a new
    fit changes the tag, so every cached card is replayed under it."""
    row = conn.execute("SELECT value FROM config WHERE key = 'fsrs-parameters'").fetchone()
    return _fitted(row[0]) if row else Current(None, scheduler_tag())


def utc(stamp: str) -> datetime:
    """A stored ISO time as an aware UTC datetime (naive text is UTC)."""
    moment = datetime.fromisoformat(stamp)
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def _moment(stamp) -> datetime | None:
    """A stored time as UTC, or None when it cannot be one (text from a damaged or hand-edited database)."""
    try:
        return utc(stamp)
    except (TypeError, ValueError, OverflowError):
        return None


def _usable(log: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The attempts a replay can use: readable times no later than now plus the allowed clock skew.

    A time far ahead (year 9999) would overflow the scheduler; it is skipped, never fatal.
    """
    horizon = datetime.now(timezone.utc) + store.CLOCK_SKEW
    return [(stamp, rating) for stamp, rating in log if (moment := _moment(stamp)) is not None and moment <= horizon]


def card_id(key: str) -> int:
    """A card's stable id, from the question id (or ``task:<id>`` for a whiteboard task)."""
    import hashlib  # OpenSSL's start-up, only when a card is replayed

    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:6], "big")


def replay(question_id: str, log: list[tuple[str, int]], now: Current | None = None) -> Card:
    """The card after reviewing ``question_id`` with each ``(answered_at, rating)`` of ``log`` in order
    (FSRS's default parameters unless ``now`` says otherwise)."""
    from fsrs import Card, Rating

    now = now or Current(None, scheduler_tag())
    card = Card(card_id=card_id(question_id), due=utc(log[0][0]) if log else None)
    for answered_at, rating in log:
        card, _ = now.scheduler.review_card(card, Rating(rating), review_datetime=utc(answered_at))
    return card


def rebuild(conn: sqlite3.Connection, question_id: str, now: Current | None = None) -> None:
    """Recompute one question's card from its attempts (inside the caller's transaction)."""
    now = now or current(conn)
    log = _usable(conn.execute("SELECT answered_at, rating FROM attempts WHERE question_id = ? ORDER BY answered_at, id", (question_id,)).fetchall())
    if not log:
        conn.execute("DELETE FROM review_state WHERE question_id = ?", (question_id,))
        return
    _write(conn, question_id, replay(question_id, log, now), now)


def _write(conn: sqlite3.Connection, question_id: str, card: Card, now: Current) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO review_state (question_id, card, due, scheduler) VALUES (?, ?, ?, ?)",
        (question_id, card.to_json(), card.due.astimezone(timezone.utc).isoformat(timespec="seconds"), now.tag),
    )


def record(conn: sqlite3.Connection, question_id: str, uid: str) -> None:
    """Bring a card up to date after attempt ``uid`` was saved or rated (inside the caller's transaction).

    When the stored card holds exactly the attempts before this one and this one is the latest, one
    scheduler step gives what a replay would; otherwise (an import, a crash before rating) it is replayed.
    """
    attempt_id, answered_at, rating = conn.execute("SELECT id, answered_at, rating FROM attempts WHERE uid = ?", (uid,)).fetchone()
    latest = conn.execute("SELECT attempt_id FROM question_last WHERE question_id = ?", (question_id,)).fetchone()
    before = conn.execute(
        "SELECT answered_at FROM attempts WHERE question_id = ? AND (answered_at, id) < (?, ?) ORDER BY answered_at DESC, id DESC LIMIT 1",
        (question_id, answered_at, attempt_id),
    ).fetchone()
    from fsrs import Rating

    now = current(conn)
    card = _card_before(conn, question_id, before[0] if before else None, answered_at, now.tag)
    moment = _moment(answered_at)
    if card is None or latest is None or latest[0] != attempt_id or moment is None or not _usable([(answered_at, rating)]):
        rebuild(conn, question_id, now)
        return
    card, _ = now.scheduler.review_card(card, Rating(rating), review_datetime=moment)
    _write(conn, question_id, card, now)


def _card_before(conn: sqlite3.Connection, question_id: str, before: str | None, answered_at: str, tag: str) -> Card | None:
    """The card as it stood after the attempt answered at ``before`` (a new one if none), or None if not stored so."""
    from fsrs import Card

    if before is None:
        return Card(card_id=card_id(question_id), due=_moment(answered_at))
    row = conn.execute("SELECT card, scheduler FROM review_state WHERE question_id = ?", (question_id,)).fetchone()
    try:
        card = Card.from_json(row[0]) if row and row[1] == tag else None
        return card if card is not None and card.last_review == utc(before) else None
    except (ValueError, KeyError, TypeError, OverflowError):
        return None


def card_before(conn: sqlite3.Connection, question_id: str, uid: str) -> Card:
    """The question's card as it stood before attempt ``uid`` (the replay of the attempts before it),
    so the rating buttons can show what each rating of that attempt would give (see drill.practice.schedule.preview)."""
    attempt_id, answered_at = conn.execute("SELECT id, answered_at FROM attempts WHERE uid = ?", (uid,)).fetchone()
    log = conn.execute(
        "SELECT answered_at, rating FROM attempts WHERE question_id = ? AND (answered_at, id) < (?, ?) ORDER BY answered_at, id",
        (question_id, answered_at, attempt_id),
    ).fetchall()
    from fsrs import Card

    usable = _usable(log)
    return replay(question_id, usable, current(conn)) if usable else Card(card_id=card_id(question_id), due=_moment(answered_at))


def next_intervals(conn: sqlite3.Connection, question_id: str, uid: str) -> dict[int, timedelta]:
    """Rating value -> the interval that rating of attempt ``uid`` would give, as Anki shows on its buttons."""
    from drill.practice.schedule import preview

    answered_at = utc(conn.execute("SELECT answered_at FROM attempts WHERE uid = ?", (uid,)).fetchone()[0])
    return {int(r): delta for r, delta in preview(current(conn).scheduler, card_before(conn, question_id, uid), answered_at).items()}


def _stale(conn: sqlite3.Connection, tag: str) -> list[str]:
    """Questions whose card is missing, from another format or parameters, or older than their latest attempt."""
    stale = []
    rows = conn.execute(
        "SELECT l.question_id, l.answered_at, r.card, r.scheduler FROM question_last l LEFT JOIN review_state r USING (question_id)"
    )
    for qid, last, card, scheduler in rows:
        try:
            fresh = scheduler == tag and _last_review(card) == utc(last)
        except (ValueError, KeyError, TypeError, OverflowError):
            fresh = False
        if not fresh:
            stale.append(qid)
    return stale


def _last_review(card: str) -> datetime | None:
    """A cached card's last review, read from its JSON without importing fsrs."""
    stamp = json.loads(card)["last_review"]
    return utc(stamp) if stamp is not None else None


def sync(conn: sqlite3.Connection) -> list[str]:
    """Rebuild every card that is missing, from another format, or behind the log; return their ids."""
    now = current(conn)
    stale = _stale(conn, now.tag)
    if stale:
        with store.transaction(conn):
            for qid in stale:
                rebuild(conn, qid, now)
    return stale


def due_dates(conn: sqlite3.Connection) -> dict[str, datetime]:
    """When each practised or nudged question is next due (after bringing the cache up to date).

    A failing grade run linked to a question (see drill.practice.mistakes) makes it due at the run's
    time until the question is answered after it; this is read from the log, never stored.
    """
    sync(conn)
    answered = store.last_answered(conn)
    dates = {qid: due for qid, stamp in conn.execute("SELECT question_id, due FROM review_state") if (due := _moment(stamp))}
    for qid, run_at in mistakes.nudges(conn).items():
        nudged = _moment(run_at)
        if nudged is None:
            continue
        last = _moment(answered.get(qid))
        if last is None or last < nudged:
            dates[qid] = min(dates.get(qid, nudged), nudged)
    return dates


def due_now(conn: sqlite3.Connection, known: set[str], now: datetime | None = None) -> list[str]:
    """Ids in ``known`` due at ``now``, most overdue first."""
    now = now or datetime.now(timezone.utc)
    dates = due_dates(conn)
    return sorted((qid for qid, due in dates.items() if qid in known and due <= now), key=lambda qid: (dates[qid], qid))
