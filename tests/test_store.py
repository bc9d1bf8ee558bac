"""The SQLite store: migrations, concurrent writers, refusing foreign files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from drill.history import store
from drill.errors import DrillError

EXPECTED_COLUMNS = {
    "sessions": {"id", "kind", "started_at", "ended_at", "status", "options"},
    "attempts": {
        "id", "uid", "session_id", "question_id", "question_hash", "level", "topic", "type", "answer", "correct",
        "rating", "seconds", "time_limit", "timed_out", "answered_at", "local_time", "utc_offset_min",
    },
    "review_state": {"question_id", "card", "due", "scheduler"},
    "config": {"key", "value"},
    "grade_runs": {"id", "uid", "task", "file", "source", "passed", "codes", "seconds", "run_at", "local_time", "utc_offset_min"},
}  # fmt: skip


def columns(conn, table):
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def test_migrates_an_empty_database(tmp_path):
    conn = store.connect(tmp_path / "new.db")
    for table, cols in EXPECTED_COLUMNS.items():
        assert cols <= columns(conn, table), table
    applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY id")]
    assert applied == [name for name, _ in store.MIGRATIONS]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.migrate(conn) == []  # idempotent


def test_migration_steps_are_transactional(tmp_path, monkeypatch):
    def broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    store.connect(tmp_path / "t.db").close()
    monkeypatch.setattr(store, "MIGRATIONS", [*store.MIGRATIONS, ("999_broken", broken)])
    with pytest.raises(RuntimeError):
        store.connect(tmp_path / "t.db")
    conn = sqlite3.connect(tmp_path / "t.db")
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'half_done'").fetchone()
    assert not conn.execute("SELECT 1 FROM _migrations WHERE name = '999_broken'").fetchone()


def test_a_crash_while_creating_a_database_leaves_one_that_can_still_be_created(tmp_path, monkeypatch):
    def broken(conn):
        raise RuntimeError("boom")

    path, released = tmp_path / "t.db", store.MIGRATIONS
    monkeypatch.setattr(store, "MIGRATIONS", [*released, ("999_broken", broken)])
    with pytest.raises(RuntimeError):
        store.connect(path)
    monkeypatch.setattr(store, "MIGRATIONS", released)
    conn = store.connect(path)  # not refused as foreign: nothing of the failed attempt was kept
    assert [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY id")] == [n for n, _ in store.MIGRATIONS]


@pytest.mark.parametrize("content", [b"this is my diary\n" * 100, b"\x00" * 4096])
def test_refuses_a_file_that_is_not_sqlite(tmp_path, content):
    path = tmp_path / "drill.db"
    path.write_bytes(content)
    with pytest.raises(DrillError, match="not a drill database"):
        store.connect(path)
    assert path.read_bytes() == content


def test_refuses_a_foreign_sqlite_database(tmp_path):
    path = tmp_path / "drill.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE photos (name TEXT)")
    other.execute("INSERT INTO photos VALUES ('cat.jpg')")
    other.commit()
    other.close()
    before = path.read_bytes()
    with pytest.raises(DrillError, match="not a drill database"):
        store.connect(path)
    assert path.read_bytes() == before


WRITER = textwrap.dedent(
    """
    import sys
    from drill.history import store
    from drill.bank.schema import OpenQuestion, Text, KeyPoint, Keywords
    kp = KeyPoint(en="k", zh="k", keywords=Keywords(en=["k"], zh=["k"]))
    q = OpenQuestion(id="q-" + sys.argv[2], level="L1", topic="t", prompt=Text(en="p", zh="p"), answer=Text(en="a", zh="a"), key_points=[kp, kp])
    conn = store.connect()
    sid = store.start_session(conn, "quiz", {})
    for i in range(int(sys.argv[1])):
        with store.transaction(conn):
            store.insert_attempt(conn, session_id=sid, question=q, answer=str(i), correct=None, rating=3, seconds=1.0, time_limit=60, timed_out=False)
    """
)


def test_two_processes_writing_at_once_lose_nothing(drill_home):
    n = 300
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(n), name]) for name in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    conn = store.connect()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    counts = dict(conn.execute("SELECT question_id, COUNT(*) FROM attempts GROUP BY question_id").fetchall())
    assert counts == {"q-a": n, "q-b": n}
    assert conn.execute("SELECT COUNT(DISTINCT uid) FROM attempts").fetchone()[0] == 2 * n


def test_attempt_stamps_and_hash(drill_home):
    from drill.bank.load import load_paths

    q = load_paths([Path(__file__).parent / "fixtures" / "quiz_bank.yaml"]).get("fx-open")
    conn = store.connect()
    with store.transaction(conn):
        uid = store.insert_attempt(conn, session_id=None, question=q, answer="x", correct=None, rating=2, seconds=3.14159, time_limit=30, timed_out=False)
    row = conn.execute("SELECT * FROM attempts WHERE uid = ?", (uid,)).fetchone()
    assert len(uid) == 32 and row["question_hash"] == store.question_hash(q) and len(row["question_hash"]) == 64
    assert row["answered_at"].endswith("+00:00") and "+" not in row["local_time"]
    assert isinstance(row["utc_offset_min"], int)
    assert store.last_ratings(conn) == {"fx-open": 2}


def test_last_rating_is_the_latest_answered_not_the_latest_inserted(drill_home):
    """An imported older attempt gets a higher id; it must not hide the newer local answer."""
    from datetime import datetime, timezone

    from drill.bank.load import load_paths

    q = load_paths([Path(__file__).parent / "fixtures" / "quiz_bank.yaml"]).get("fx-open")
    conn = store.connect()
    with store.transaction(conn):
        for rating, day in ((1, 5), (4, 1)):  # inserted newest first, as after a history import
            store.insert_attempt(conn, session_id=None, question=q, answer="x", correct=None, rating=rating, seconds=1,
                                 time_limit=30, timed_out=False, now=datetime(2024, 3, day, 12, tzinfo=timezone.utc))  # fmt: skip
    assert store.last_ratings(conn) == {"fx-open": 1}


def _summaries(conn) -> dict:
    return {t: sorted(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in conn.execute(f"SELECT * FROM {t}"))
            for t in store.SUMMARY_TABLES}  # fmt: skip


def test_summaries_kept_by_triggers_equal_a_rebuild_from_the_log(drill_home):
    """Inserts, rating changes, edits and deletes in any order: the kept summaries are what the log says."""
    import random
    from datetime import datetime, timedelta

    from practice import add_attempt

    rng, conn = random.Random(7), store.connect()
    uids = []
    conn.execute("BEGIN")
    for i in range(400):
        action = rng.random()
        if action < 0.6 or not uids:
            local = datetime(2024, 1, 1) + timedelta(minutes=rng.randrange(60 * 24 * 90))
            uids.append(add_attempt(conn, local, rng.choice((-300, 0, 480)), topic=rng.choice(("a", "b", "c")), level=rng.choice(("L1", "L2")),
                                    type=rng.choice(("open", "choice")), correct=rng.choice((None, 0, 1)), rating=rng.randint(1, 4),
                                    seconds=rng.uniform(1, 100), time_limit=rng.choice((None, 60.0)), timed_out=rng.randint(0, 1)))  # fmt: skip
        elif action < 0.8:
            store.set_rating(conn, rng.choice(uids), rng.randint(1, 4))
        elif action < 0.9:
            conn.execute("UPDATE attempts SET topic = ?, answered_at = ? WHERE uid = ?", (rng.choice(("a", "d")), f"2024-0{rng.randint(1, 9)}-01T00:00:00+00:00", rng.choice(uids)))
        else:
            conn.execute("DELETE FROM attempts WHERE uid = ?", (uids.pop(rng.randrange(len(uids))),))
    conn.execute("COMMIT")
    kept = _summaries(conn)
    with store.transaction(conn):
        store.rebuild_summaries(conn)
    assert kept == _summaries(conn)
    latest = {r[0]: r[1] for r in conn.execute("SELECT question_id, rating FROM attempts ORDER BY answered_at, id")}
    assert store.last_ratings(conn) == latest


def test_migrating_an_existing_history_builds_its_summaries(drill_home, monkeypatch):
    from datetime import datetime

    from practice import add_attempt

    released = store.MIGRATIONS
    monkeypatch.setattr(store, "MIGRATIONS", released[:3])
    conn = store.connect()
    for day in (1, 2, 2, 3):
        add_attempt(conn, datetime(2024, 5, day, 9), topic="masks", rating=day)
    conn.close()
    monkeypatch.setattr(store, "MIGRATIONS", released)
    conn = store.connect()
    assert store.last_ratings(conn) == {"masks-q": 3}
    assert conn.execute("SELECT attempts FROM topic_totals WHERE topic = 'masks'").fetchone()[0] == 4
    assert dict(conn.execute("SELECT hour, attempts FROM hour_counts").fetchall()) == {"2024-05-01T09": 1, "2024-05-02T09": 2, "2024-05-03T09": 1}
