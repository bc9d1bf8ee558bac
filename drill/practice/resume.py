"""An interrupted quiz, found again: ``drill quiz --resume`` asks the rest of its selection.

A quiz writes its questions in order to ``session_questions`` when it starts and marks each one
``shown`` as it goes on screen; what was answered is already in the attempt log. So the rest of an
interrupted quiz is its selection minus its attempts, read from the log, never from a file that
could disagree with it. Only the latest quiz counts: a newer quiz, resumed or fresh, replaces it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from drill.history import store

RESUMABLE_KIND = "quiz"


@dataclass(frozen=True)
class Interrupted:
    session_id: int
    options: dict  # the options the quiz was started with (time, strict, reveal ...)
    remaining: list[str]  # question ids still to ask: the one interrupted while shown first, then in the quiz's order
    answered: int


def save_selection(conn: sqlite3.Connection, session_id: int, question_ids: list[str]) -> None:
    with store.transaction(conn):
        conn.executemany(
            "INSERT INTO session_questions (session_id, position, question_id) VALUES (?, ?, ?)",
            [(session_id, n, qid) for n, qid in enumerate(question_ids, 1)],
        )


def mark_shown(conn: sqlite3.Connection, session_id: int, position: int) -> None:
    with store.transaction(conn):
        conn.execute("UPDATE session_questions SET shown = 1 WHERE session_id = ? AND position = ?", (session_id, position))


def latest(conn: sqlite3.Connection) -> Interrupted | None:
    """The latest quiz when it ended before its last question was answered; None when it was completed (or none ran)."""
    row = conn.execute(
        "SELECT id, status, options FROM sessions WHERE kind = ? ORDER BY id DESC LIMIT 1", (RESUMABLE_KIND,)
    ).fetchone()
    if row is None or row["status"] == "complete":
        return None
    remaining = [
        qid
        for (qid,) in conn.execute(
            "SELECT question_id FROM session_questions s WHERE session_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM attempts a WHERE a.question_id = s.question_id AND a.session_id = s.session_id)"
            " ORDER BY shown DESC, position",
            (row["id"],),
        )
    ]
    if not remaining:
        return None
    answered = conn.execute(
        "SELECT COUNT(*) FROM session_questions s WHERE session_id = ? AND EXISTS"
        " (SELECT 1 FROM attempts a WHERE a.question_id = s.question_id AND a.session_id = s.session_id)",
        (row["id"],),
    ).fetchone()[0]
    try:
        options = json.loads(row["options"])
    except ValueError:
        options = {}
    return Interrupted(row["id"], options if isinstance(options, dict) else {}, remaining, answered)


def interrupted_while_shown(conn: sqlite3.Connection) -> list[str]:
    """The question on screen when the latest quiz was interrupted: a fresh quiz asks it first."""
    found = latest(conn)
    if found is None:
        return []
    shown = conn.execute(
        "SELECT question_id FROM session_questions WHERE session_id = ? AND shown = 1", (found.session_id,)
    ).fetchall()
    return [qid for qid in found.remaining if (qid,) in {tuple(r) for r in shown}]
