"""The user's practice history in SQLite, with append-only numbered migrations.

The attempt log is the source of truth: review state and streaks are derived from
it. Writes use ``BEGIN IMMEDIATE`` in WAL mode so two drill processes can record at
once without losing rows, and a file that is not a drill database is refused,
never reset.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Union

from drill.errors import DrillError
from drill.paths import db_path

SQLITE_MAGIC = b"SQLite format 3\x00"

Step = Union[str, Callable[[sqlite3.Connection], None]]

# Append-only: never edit or reorder a step once released; add a new one instead.
MIGRATIONS: list[tuple[str, Step]] = [
    (
        "001_initial",
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,                 -- quiz | review | mock | pitch | whiteboard
            started_at TEXT NOT NULL,           -- UTC ISO-8601
            ended_at TEXT,
            status TEXT NOT NULL DEFAULT 'running',  -- running | complete | incomplete
            options TEXT NOT NULL DEFAULT '{}'  -- JSON of the options used
        );
        CREATE TABLE attempts (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,           -- stable id so history import never duplicates
            session_id INTEGER REFERENCES sessions(id),
            question_id TEXT NOT NULL,
            question_hash TEXT NOT NULL,        -- hash of the question text answered
            level TEXT NOT NULL,
            topic TEXT NOT NULL,
            type TEXT NOT NULL,
            answer TEXT NOT NULL,
            correct INTEGER,                    -- 1/0 for objective questions, NULL for open ones
            rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),  -- Again/Hard/Good/Easy
            seconds REAL NOT NULL,
            time_limit REAL,
            timed_out INTEGER NOT NULL DEFAULT 0,
            answered_at TEXT NOT NULL,          -- UTC ISO-8601
            local_time TEXT NOT NULL,           -- local wall clock at answer time, ISO-8601 without offset
            utc_offset_min INTEGER NOT NULL     -- the local UTC offset at answer time, minutes
        );
        CREATE INDEX attempts_question ON attempts(question_id);
        CREATE INDEX attempts_local_time ON attempts(local_time);
        CREATE TABLE grade_runs (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            task TEXT NOT NULL,
            file TEXT NOT NULL,
            source TEXT NOT NULL,               -- grade | whiteboard
            passed INTEGER NOT NULL,
            codes TEXT NOT NULL DEFAULT '[]',   -- JSON list of diagnosis codes
            seconds REAL,                       -- time to solve (whiteboard) or to grade
            run_at TEXT NOT NULL,
            local_time TEXT NOT NULL,
            utc_offset_min INTEGER NOT NULL
        );
        CREATE TABLE review_state (
            question_id TEXT PRIMARY KEY,
            card TEXT NOT NULL,                 -- the scheduler's card as JSON
            due TEXT NOT NULL,                  -- UTC ISO-8601
            scheduler TEXT NOT NULL             -- library and format version that wrote `card`
        );
        CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ),
    (
        "002_stats_indexes",
        # drill stats groups by local hour and by level/topic; covering indexes in that order spare a sort of every row
        """
        CREATE INDEX attempts_local_hour ON attempts(substr(local_time, 1, 13), local_time);
        CREATE INDEX attempts_stats ON attempts(level, topic, correct, rating, seconds, time_limit, timed_out);
        """,
    ),
]


def now_stamps(now: datetime | None = None) -> tuple[str, str, int]:
    """(UTC ISO time, local wall-clock ISO time, UTC offset in minutes) for a record."""
    local = (now or datetime.now(timezone.utc)).astimezone()
    offset = local.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset else 0
    return (
        local.astimezone(timezone.utc).isoformat(timespec="seconds"),
        local.replace(tzinfo=None).isoformat(timespec="seconds"),
        minutes,
    )


def _check_is_drill_db(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh:
        if fh.read(16) != SQLITE_MAGIC:
            raise DrillError(f"{path} is not a drill database (not SQLite); move it away or set DRILL_HOME")


def _applied(conn: sqlite3.Connection) -> set[str]:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "_migrations" not in tables:
        if tables:
            raise DrillError(f"{conn_path(conn)} is an SQLite file but not a drill database; move it away or set DRILL_HOME")
        conn.execute("CREATE TABLE _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)")
        return set()
    return {r[0] for r in conn.execute("SELECT name FROM _migrations")}


def conn_path(conn: sqlite3.Connection) -> str:
    return next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "database")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending steps in order, each in its own transaction; return their names."""
    with transaction(conn):
        done = _applied(conn)
    names = [name for name, _ in MIGRATIONS]
    unknown = done - set(names)
    if unknown:
        raise DrillError(f"{conn_path(conn)} was written by a newer drill (migration {sorted(unknown)[-1]}); upgrade drill")
    applied = []
    for name, step in MIGRATIONS:
        if name in done:
            continue
        with transaction(conn):
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue  # another process applied it meanwhile
            if callable(step):
                step(conn)
            else:
                for statement in _statements(step):
                    conn.execute(statement)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, now_stamps()[0]))
        applied.append(name)
    return applied


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit implicitly)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line.split("--", 1)[0] if "--" in line else line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    return statements


def connect(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating and migrating if needed) the drill database."""
    path = path or db_path()
    _check_is_drill_db(path)
    try:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        migrate(conn)  # first: it refuses a foreign database before anything writes to it
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:
        raise DrillError(f"{path}: cannot use the database: {exc}") from None
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``: the writer lock is taken up front, so concurrent writers queue instead of failing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def start_session(conn: sqlite3.Connection, kind: str, options: dict) -> int:
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO sessions (kind, started_at, options) VALUES (?, ?, ?)",
            (kind, now_stamps()[0], json.dumps(options, sort_keys=True, default=str)),
        )
    return int(cur.lastrowid)


def finish_session(conn: sqlite3.Connection, session_id: int, status: str) -> None:
    with transaction(conn):
        conn.execute("UPDATE sessions SET status = ?, ended_at = ? WHERE id = ?", (status, now_stamps()[0], session_id))


def question_hash(q) -> str:
    """Identifies the text answered, so history survives edits to a question but can tell them apart."""
    import hashlib  # only when recording: `drill stats` starts without it

    text = "\x00".join([q.prompt.en, q.prompt.zh, q.answer.en, q.answer.zh])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def insert_attempt(
    conn: sqlite3.Connection,
    *,
    session_id: int | None,
    question,
    answer: str,
    correct: bool | None,
    rating: int,
    seconds: float,
    time_limit: float | None,
    timed_out: bool,
    now: datetime | None = None,
) -> str:
    """Insert one attempt (inside the caller's transaction); return its uid."""
    uid = uuid.uuid4().hex
    answered_at, local_time, offset = now_stamps(now)
    conn.execute(
        """INSERT INTO attempts (uid, session_id, question_id, question_hash, level, topic, type, answer, correct,
                                 rating, seconds, time_limit, timed_out, answered_at, local_time, utc_offset_min)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            uid, session_id, question.id, question_hash(question), question.level, question.topic, question.type,
            answer, None if correct is None else int(correct), int(rating), round(seconds, 3), time_limit,
            int(timed_out), answered_at, local_time, offset,
        ),
    )  # fmt: skip
    return uid


def last_ratings(conn: sqlite3.Connection) -> dict[str, int]:
    """The rating of each question's latest attempt, by answer time (imported attempts get new, higher ids)."""
    rows = conn.execute(
        "SELECT question_id, rating FROM attempts a WHERE id = (SELECT id FROM attempts b WHERE b.question_id = a.question_id"
        " ORDER BY answered_at DESC, id DESC LIMIT 1)"
    )
    return {r["question_id"]: r["rating"] for r in rows}


def attempts(conn: sqlite3.Connection, session_id: int | None = None) -> list[sqlite3.Row]:
    """Attempts in the order they were answered, optionally of one session."""
    if session_id is None:
        return conn.execute("SELECT * FROM attempts ORDER BY answered_at, id").fetchall()
    return conn.execute("SELECT * FROM attempts WHERE session_id = ? ORDER BY answered_at, id", (session_id,)).fetchall()


def set_rating(conn: sqlite3.Connection, uid: str, rating: int) -> None:
    """Replace the provisional rating of an open answer (inside the caller's transaction)."""
    conn.execute("UPDATE attempts SET rating = ? WHERE uid = ?", (int(rating), uid))


def record_grade_run(
    conn: sqlite3.Connection,
    *,
    task: str,
    file: str,
    source: str,
    passed: bool,
    codes: list[str],
    seconds: float | None,
    now: datetime | None = None,
) -> str:
    """Record one ``drill grade`` or whiteboard verdict in its own transaction; return its uid."""
    uid = uuid.uuid4().hex
    run_at, local_time, offset = now_stamps(now)
    with transaction(conn):
        conn.execute(
            "INSERT INTO grade_runs (uid, task, file, source, passed, codes, seconds, run_at, local_time, utc_offset_min)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (uid, task, file, source, int(passed), json.dumps(list(codes)), None if seconds is None else round(seconds, 3),
             run_at, local_time, offset),
        )  # fmt: skip
    return uid
