"""The user's practice history in SQLite, with append-only numbered migrations.

The attempt log is the source of truth: review state, streaks and the summary
tables (kept by triggers, so reading the history costs the number of questions,
topics or hours rather than of attempts) are derived from it. Writes use ``BEGIN IMMEDIATE`` in WAL mode so two drill processes can record at
once without losing rows, and a file that is not a drill database is refused,
never reset.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator, Union

from drill.errors import DrillError, StorageError
from drill.text.messages import Msg
from drill.paths import db_path

SQLITE_MAGIC = b"SQLite format 3\x00"
CLOCK_SKEW = timedelta(days=1)  # how far ahead of this clock a recorded time may be (another machine's clock)

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
    ("003_session_uid", lambda conn: _add_session_uids(conn)),
    ("004_summaries", lambda conn: _add_summaries(conn)),
    (
        "005_task_reviews",
        # one row per rated whiteboard session: the log that whiteboard tasks' FSRS cards are replayed from
        """
        CREATE TABLE task_reviews (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            task TEXT NOT NULL,
            rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),  -- Again/Hard/Good/Easy, given by the grader
            hints INTEGER NOT NULL,
            failing_saves INTEGER NOT NULL,
            seconds REAL NOT NULL,
            limit_s REAL NOT NULL,
            reviewed_at TEXT NOT NULL,          -- UTC ISO-8601
            local_time TEXT NOT NULL,
            utc_offset_min INTEGER NOT NULL
        );
        CREATE INDEX task_reviews_task ON task_reviews(task, reviewed_at);
        """,
    ),
    (
        "006_quiz_selection",
        # a quiz's questions in the order asked, so `drill quiz --resume` can go on with the rest (drill.practice.resume);
        # `shown`: put on screen, so a question interrupted while shown comes back first. Local state: not exported.
        """
        CREATE TABLE session_questions (
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            position INTEGER NOT NULL,
            question_id TEXT NOT NULL,
            shown INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (session_id, position)
        );
        """,
    ),
]

# Tables kept up to date from the attempt log by triggers, so reading the history costs the number of
# questions, topics or hours, not of attempts. Derived only: rebuild_summaries() recomputes them.
# Migration 004 creates them and _check_schema() remakes lost ones from this text: change it only
# together with a new migration that brings existing databases to the same result.
CORRECT_OF = "CASE WHEN {r}.correct IS NULL THEN {r}.rating >= 3 ELSE {r}.correct = 1 END"
_ADD = """
INSERT INTO question_last VALUES ({r}.question_id, {r}.id, {r}.answered_at, {r}.rating)
    ON CONFLICT(question_id) DO UPDATE SET attempt_id = excluded.attempt_id, answered_at = excluded.answered_at, rating = excluded.rating
    WHERE (excluded.answered_at, excluded.attempt_id) > (question_last.answered_at, question_last.attempt_id);
INSERT INTO topic_totals VALUES ({r}.level, {r}.topic, 1, {correct}, {r}.seconds, coalesce({r}.time_limit, 0), {r}.time_limit IS NOT NULL, {r}.timed_out)
    ON CONFLICT(level, topic) DO UPDATE SET attempts = attempts + 1, correct = correct + excluded.correct, seconds = seconds + excluded.seconds,
    limit_sum = limit_sum + excluded.limit_sum, limited = limited + excluded.limited, timed_out = timed_out + excluded.timed_out;
INSERT INTO hour_counts VALUES (substr({r}.local_time, 1, 13), 1) ON CONFLICT(hour) DO UPDATE SET attempts = attempts + 1;
"""
_REMOVE = """
UPDATE topic_totals SET attempts = attempts - 1, correct = correct - {correct}, seconds = seconds - {r}.seconds,
    limit_sum = limit_sum - coalesce({r}.time_limit, 0), limited = limited - ({r}.time_limit IS NOT NULL), timed_out = timed_out - {r}.timed_out
    WHERE level = {r}.level AND topic = {r}.topic;
DELETE FROM topic_totals WHERE level = {r}.level AND topic = {r}.topic AND attempts = 0;
UPDATE hour_counts SET attempts = attempts - 1 WHERE hour = substr({r}.local_time, 1, 13);
DELETE FROM hour_counts WHERE hour = substr({r}.local_time, 1, 13) AND attempts = 0;
DELETE FROM question_last WHERE question_id = {r}.question_id AND attempt_id = {r}.id;
INSERT OR IGNORE INTO question_last SELECT question_id, id, answered_at, rating FROM attempts
    WHERE question_id = {r}.question_id ORDER BY answered_at DESC, id DESC LIMIT 1;
"""


def _sql(template: str, row: str) -> str:
    return template.format(r=row, correct=CORRECT_OF.format(r=row))


SUMMARY_TABLES = ("question_last", "topic_totals", "hour_counts")
SUMMARY_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS question_last (
    question_id TEXT PRIMARY KEY, attempt_id INTEGER NOT NULL, answered_at TEXT NOT NULL, rating INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS topic_totals (
    level TEXT NOT NULL, topic TEXT NOT NULL, attempts INTEGER NOT NULL, correct INTEGER NOT NULL, seconds REAL NOT NULL,
    limit_sum REAL NOT NULL, limited INTEGER NOT NULL, timed_out INTEGER NOT NULL, PRIMARY KEY (level, topic));
CREATE TABLE IF NOT EXISTS hour_counts (hour TEXT PRIMARY KEY, attempts INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS attempts_added AFTER INSERT ON attempts BEGIN {_sql(_ADD, "NEW")} END;
CREATE TRIGGER IF NOT EXISTS attempts_removed AFTER DELETE ON attempts BEGIN {_sql(_REMOVE, "OLD")} END;
CREATE TRIGGER IF NOT EXISTS attempts_changed AFTER UPDATE ON attempts BEGIN {_sql(_REMOVE, "OLD")} {_sql(_ADD, "NEW")} END;
"""
SUMMARY_TRIGGERS = ("attempts_added", "attempts_removed", "attempts_changed")
# The log's tables, by the migration that creates them: a database must have those of every applied step.
CORE_TABLES = {
    "001_initial": ("sessions", "attempts", "grade_runs", "review_state", "config"),
    "005_task_reviews": ("task_reviews",),
    "006_quiz_selection": ("session_questions",),
}


def rebuild_summaries(conn: sqlite3.Connection) -> None:
    """Recompute the summary tables from the attempt log (inside the caller's transaction)."""
    for table in SUMMARY_TABLES:
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        "INSERT INTO question_last SELECT question_id, id, answered_at, rating FROM (SELECT question_id, id, answered_at, rating,"
        " row_number() OVER (PARTITION BY question_id ORDER BY answered_at DESC, id DESC) AS n FROM attempts) WHERE n = 1"
    )
    conn.execute(
        f"INSERT INTO topic_totals SELECT level, topic, COUNT(*), SUM({CORRECT_OF.format(r='attempts')}), SUM(seconds),"
        " coalesce(SUM(time_limit), 0), COUNT(time_limit), SUM(timed_out) FROM attempts GROUP BY level, topic"
    )
    conn.execute("INSERT INTO hour_counts SELECT substr(local_time, 1, 13), COUNT(*) FROM attempts GROUP BY 1")


def _add_summaries(conn: sqlite3.Connection) -> None:
    for statement in _statements(SUMMARY_SCHEMA):
        conn.execute(statement)
    rebuild_summaries(conn)
    # the summaries replace the stats indexes; review replays one question's attempts in answer order
    for index in ("attempts_local_hour", "attempts_stats", "attempts_question"):
        conn.execute(f"DROP INDEX IF EXISTS {index}")
    conn.execute("CREATE INDEX attempts_question_time ON attempts(question_id, answered_at, id)")


def session_uid(kind: str, started_at: str, options: str, first_attempt: str | None, repeat: int = 0) -> str:
    """The uid of a session recorded before sessions had one: the same on every machine holding a copy of it.

    Copies share their kind, start, options and attempts (whose uids are unique), whatever their local ids.
    """
    import hashlib

    key = "\x00".join([str(kind), str(started_at), str(options), first_attempt or "", str(repeat)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _add_session_uids(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE sessions ADD COLUMN uid TEXT")
    first = dict(conn.execute("SELECT session_id, MIN(uid) FROM attempts WHERE session_id IS NOT NULL GROUP BY session_id"))
    seen: dict[str, int] = {}
    for sid, kind, started_at, options in conn.execute("SELECT id, kind, started_at, options FROM sessions ORDER BY id").fetchall():
        base = session_uid(kind, started_at, options, first.get(sid))
        repeat = seen[base] = seen.get(base, -1) + 1
        conn.execute("UPDATE sessions SET uid = ? WHERE id = ?", (session_uid(kind, started_at, options, first.get(sid), repeat), sid))
    conn.execute("CREATE UNIQUE INDEX sessions_uid ON sessions(uid)")


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


def _is_new(path: Path) -> bool:
    """True for a missing or zero-length file (the only ones that may become a drill database); refuse non-SQLite files."""
    try:
        if not path.exists() or path.stat().st_size == 0:
            return True
        with path.open("rb") as fh:
            magic = fh.read(16)
    except OSError as exc:
        raise DrillError("{path}: cannot read the database: {why}", path=str(path), why=exc.strerror or str(exc)) from None
    if magic != SQLITE_MAGIC:
        raise DrillError("{path} is not a drill database (not SQLite); move it away or set DRILL_HOME", path=str(path))
    return False


def _applied(conn: sqlite3.Connection, new: bool) -> set[str]:
    """The migrations already applied; creates the bookkeeping table only in a new, empty database."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    foreign = Msg("{path} is an SQLite file but not a drill database; move it away or set DRILL_HOME", path=conn_path(conn))
    if "_migrations" in tables:
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        if not done:
            raise DrillError(foreign)
        return done
    if tables or not new:
        raise DrillError(foreign)
    conn.execute("CREATE TABLE _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)")
    return set()


def conn_path(conn: sqlite3.Connection) -> str:
    return next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "database")


def _apply(conn: sqlite3.Connection, name: str, step: Step) -> None:
    if callable(step):
        step(conn)
    else:
        for statement in _statements(step):
            conn.execute(statement)
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, now_stamps()[0]))


def migrate(conn: sqlite3.Connection, new: bool = False) -> list[str]:
    """Apply pending steps in order, each in its own transaction; return their names.

    A new database gets every step in the transaction that creates ``_migrations``, so a crash
    never leaves a half-made file that would later be refused as foreign.
    """
    with transaction(conn):
        done = _applied(conn, new)
        if not done:
            for name, step in MIGRATIONS:
                _apply(conn, name, step)
            return [name for name, _ in MIGRATIONS]
    names = [name for name, _ in MIGRATIONS]
    unknown = done - set(names)
    if unknown:
        raise DrillError("{path} was written by a newer drill (migration {migration}); upgrade drill", path=conn_path(conn), migration=sorted(unknown)[-1])
    applied = []
    for name, step in MIGRATIONS:
        if name in done:
            continue
        with transaction(conn):
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue  # another process applied it meanwhile
            _apply(conn, name, step)
        applied.append(name)
    return applied


def _check_schema(conn: sqlite3.Connection) -> None:
    """Refuse a database that lost a table; silently remake lost summaries (they are derived from the log)."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    required = [t for name, _ in MIGRATIONS for t in CORE_TABLES.get(name, ())]
    lost = [t for t in required if t not in present]
    if lost:
        raise DrillError("{path}: damaged drill database: table `{table}` is missing; move the file away and `drill history import` an export (or restore a backup)",
                         path=conn_path(conn), table=lost[0])  # fmt: skip
    if not present.issuperset(SUMMARY_TABLES + SUMMARY_TRIGGERS):
        with transaction(conn):
            for statement in _statements(SUMMARY_SCHEMA):
                conn.execute(statement)
            rebuild_summaries(conn)


def describe(path: Path | str, exc: sqlite3.Error) -> str:
    """One line for a database failure; a full disk is named as such."""
    if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return Msg("{path}: the disk is full (free some space, then run it again)", path=str(path))
    return Msg("{path}: cannot use the database: {why}", path=str(path), why=str(exc))


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
    new = _is_new(path)
    try:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        migrate(conn, new)  # first: it refuses a foreign database before anything writes to it
        conn.execute("PRAGMA journal_mode=WAL")
        _check_schema(conn)
    except sqlite3.Error as exc:
        raise StorageError(describe(path, exc)) from None
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``: the writer lock is taken up front, so concurrent writers queue instead of failing.

    A write the environment refuses (full disk, damaged file, lock held too long) becomes a one-line StorageError.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield conn
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:  # SQLite may already have rolled back (a full disk at COMMIT)
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
            raise StorageError(describe(conn_path(conn), exc)) from None
        raise


def start_session(conn: sqlite3.Connection, kind: str, options: dict) -> int:
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO sessions (uid, kind, started_at, options) VALUES (?, ?, ?, ?)",
            (uuid.uuid4().hex, kind, now_stamps()[0], json.dumps(options, sort_keys=True, default=str)),
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
    return dict(conn.execute("SELECT question_id, rating FROM question_last").fetchall())


def last_answered(conn: sqlite3.Connection) -> dict[str, str]:
    """When each question was last answered (UTC ISO text, as stored)."""
    return dict(conn.execute("SELECT question_id, answered_at FROM question_last").fetchall())


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
