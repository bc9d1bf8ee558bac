"""History export/import: round trip, idempotent merge of two machines, bad files rejected whole."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from typer.testing import CliRunner

from drill import config
from drill.practice import review
from drill.cli import app
from drill.history.store import connect, start_session
from practice import add_attempt, add_run

runner = CliRunner()
T = datetime(2024, 6, 1, 10)


def rows(conn, table: str) -> list[dict]:
    """Rows without local ids, attempts with their session's natural key instead of its id."""
    if table == "attempts":
        sql = "SELECT a.*, s.kind, s.started_at FROM attempts a LEFT JOIN sessions s ON s.id = a.session_id ORDER BY a.uid"
        return [{k: r[k] for k in r.keys() if k not in ("id", "session_id")} for r in conn.execute(sql)]
    order = {"sessions": "started_at", "review_state": "question_id", "config": "key"}.get(table, "uid")
    return [{k: r[k] for k in r.keys() if k != "id"} for r in conn.execute(f"SELECT * FROM {table} ORDER BY {order}")]


def machine(prefix: str, home, monkeypatch, hour: int = 10):
    """A database in its own DRILL_HOME with a session, attempts, a grade run and a review card."""
    monkeypatch.setenv("DRILL_HOME", str(home))
    conn = connect()
    sid = start_session(conn, "quiz", {"count": 2})
    conn.execute("UPDATE sessions SET started_at = ? WHERE id = ?", (f"2024-06-01T{hour:02}:00:00+00:00", sid))
    add_attempt(conn, T.replace(hour=hour), 120, uid=f"{prefix}-1", session_id=sid)
    add_attempt(conn, T.replace(hour=hour, minute=1), 120, uid=f"{prefix}-2", session_id=sid, type="open", correct=None, rating=2)
    add_run(conn, T.replace(hour=hour))
    conn.execute("INSERT INTO review_state VALUES (?, '{}', '2024-06-02T00:00:00+00:00', 'fsrs-6')", (f"{prefix}-question",))
    review.sync(conn)  # as any command would: cards for the attempts above
    return conn


TABLES = ("sessions", "attempts", "grade_runs", "review_state", "config")


def test_round_trip_into_an_empty_machine(tmp_path, monkeypatch):
    a = machine("a", tmp_path / "a", monkeypatch)
    config.set_value(a, "daily-goal", "3")
    result = runner.invoke(app, ["history", "export", str(tmp_path / "h.json")])
    assert result.exit_code == 0, result.output
    assert "2 attempts" in result.stdout
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "b"))
    result = runner.invoke(app, ["history", "import", str(tmp_path / "h.json")])
    assert result.exit_code == 0, result.output
    b = connect()
    for table in TABLES:
        assert rows(b, table) == rows(a, table), table


def test_merging_two_machines_is_a_union_and_idempotent(tmp_path, monkeypatch):
    b = machine("b", tmp_path / "b", monkeypatch, hour=11)
    config.set_value(b, "daily-goal", "8")
    b_before = {t: rows(b, t) for t in TABLES}
    runner.invoke(app, ["history", "export", str(tmp_path / "b.json")])
    a = machine("a", tmp_path / "a", monkeypatch)
    config.set_value(a, "daily-goal", "3")
    a_before = {t: rows(a, t) for t in TABLES}

    first = runner.invoke(app, ["history", "import", str(tmp_path / "b.json")])
    assert first.exit_code == 0, first.output
    assert "kept local config daily-goal=3" in first.stdout
    merged = {t: rows(a, t) for t in TABLES}
    for table in ("sessions", "attempts", "grade_runs"):
        assert len(merged[table]) == len(a_before[table]) + len(b_before[table])
        assert all(r in merged[table] for r in a_before[table] + b_before[table]), table
    questions = {r["question_id"] for r in a_before["review_state"] + b_before["review_state"]}
    assert {r["question_id"] for r in merged["review_state"]} == questions
    assert review.sync(a) == []  # the question both machines practised has a card replayed from both logs
    assert merged["config"] == a_before["config"]  # local settings win

    second = runner.invoke(app, ["history", "import", str(tmp_path / "b.json")])
    assert second.exit_code == 0
    assert "nothing new" in second.stdout
    assert {t: rows(a, t) for t in TABLES} == merged


def test_missing_config_keys_are_added(tmp_path, monkeypatch):
    machine("b", tmp_path / "b", monkeypatch)
    config.set_value(connect(), "day-start-hour", "6")
    runner.invoke(app, ["history", "export", str(tmp_path / "b.json")])
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "a"))
    runner.invoke(app, ["history", "import", str(tmp_path / "b.json")])
    assert config.get(connect(), "day-start-hour") == "6"


def _export_with(tmp_path, monkeypatch, edit) -> str:
    machine("b", tmp_path / "b", monkeypatch)
    path = tmp_path / "h.json"
    runner.invoke(app, ["history", "export", str(path)])
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["attempts"][1].update(rating=9), "attempts[1]: `rating` must be a rating from 1 to 4, not 9"),
        (lambda d: d["attempts"][0].pop("uid"), "attempts[0]: missing `uid`"),
        (lambda d: d["grade_runs"][0].update(local_time="yesterday"), "grade_runs[0]: `local_time` is not an ISO-8601 time"),
        (lambda d: d["attempts"][0].update(session_id=999), "session_id 999 matches no session"),
        (lambda d: d["config"].update({"daily-goal": "lots"}), "config daily-goal: 'lots' must be a whole number"),
        (lambda d: d.update(format="other"), "not a drill history export"),
        (lambda d: d.update(version=2), "newer than this drill supports"),
    ],
)
def test_a_bad_file_is_refused_whole_and_changes_nothing(tmp_path, monkeypatch, edit, message):
    path = _export_with(tmp_path, monkeypatch, edit)
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "a"))
    a = machine("a", tmp_path / "a", monkeypatch)
    before = {t: rows(a, t) for t in TABLES}
    result = runner.invoke(app, ["history", "import", path])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert {t: rows(a, t) for t in TABLES} == before


def test_unreadable_files(tmp_path):
    missing = runner.invoke(app, ["history", "import", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    (tmp_path / "bad.json").write_text("{\n  oops")
    broken = runner.invoke(app, ["history", "import", str(tmp_path / "bad.json")])
    assert broken.exit_code == 2 and "bad.json:2: not valid JSON" in broken.stderr
    unwritable = runner.invoke(app, ["history", "export", str(tmp_path / "no-such-dir" / "h.json")])
    assert unwritable.exit_code == 2 and "cannot write" in unwritable.stderr


def test_sessions_that_started_in_the_same_second_stay_apart(tmp_path, monkeypatch):
    """Two machines can start a quiz in the same second: six sessions exported are six imported."""
    conn = machine("a", tmp_path / "a", monkeypatch)
    for i in range(5):
        sid = start_session(conn, "quiz", {"count": 2})
        conn.execute("UPDATE sessions SET started_at = ? WHERE id = ?", (f"2024-06-01T{10 + i // 2:02}:00:00+00:00", sid))
        add_attempt(conn, T.replace(minute=10 + i), uid=f"a-s{i}", session_id=sid)
    path = tmp_path / "h.json"
    assert runner.invoke(app, ["history", "export", str(path)]).exit_code == 0
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "b"))
    result = runner.invoke(app, ["history", "import", str(path)])
    assert result.exit_code == 0, result.output
    assert "already here" not in result.stdout
    assert rows(connect(), "sessions") == rows(conn, "sessions")
    assert rows(connect(), "attempts") == rows(conn, "attempts")  # each attempt still in its own session


def _legacy_home(home, monkeypatch) -> None:
    """A database written by a drill from before sessions had a uid, with two sessions in the same second."""
    from drill.history import store

    released = store.MIGRATIONS
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.setattr(store, "MIGRATIONS", released[:2])
    conn = connect()
    for n in range(3):
        conn.execute("INSERT INTO sessions (kind, started_at, options) VALUES ('quiz', '2024-06-01T10:00:00+00:00', '{}')")
        if n < 2:
            add_attempt(conn, T.replace(minute=n), uid=f"legacy-{n}", session_id=n + 1)
    conn.close()
    monkeypatch.setattr(store, "MIGRATIONS", released)


def test_session_uids_are_backfilled_deterministically(tmp_path, monkeypatch):
    import shutil

    _legacy_home(tmp_path / "a", monkeypatch)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    uids = []
    for name in ("a", "b"):
        monkeypatch.setenv("DRILL_HOME", str(tmp_path / name))
        uids.append([r[0] for r in connect().execute("SELECT uid FROM sessions ORDER BY id")])
    assert uids[0] == uids[1] and len(set(uids[0])) == 3 and all(len(u) == 32 for u in uids[0])


def test_an_export_from_before_session_uids_matches_the_migrated_sessions(tmp_path, monkeypatch):
    from drill.history import store

    _legacy_home(tmp_path / "a", monkeypatch)
    released = store.MIGRATIONS
    monkeypatch.setattr(store, "MIGRATIONS", released[:2])
    old = tmp_path / "old.json"
    assert runner.invoke(app, ["history", "export", str(old)]).exit_code == 0  # written by the old schema: no session uid
    assert "uid" not in json.loads(old.read_text())["sessions"][0]
    monkeypatch.setattr(store, "MIGRATIONS", released)
    again = runner.invoke(app, ["history", "import", str(old)])  # the same machine, now migrated
    assert again.exit_code == 0, again.output
    assert connect().execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 3  # each matched, none added
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "c"))
    fresh = runner.invoke(app, ["history", "import", str(old)])
    assert fresh.exit_code == 0 and connect().execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 3


def _future(days: float) -> str:
    from datetime import timedelta, timezone

    return (datetime.now(timezone.utc) + timedelta(days=days)).isoformat(timespec="seconds")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["attempts"][1].update(answered_at="9999-12-31T23:59:59+00:00"), "attempts[1]: `answered_at` 9999-12-31T23:59:59+00:00 is in the future"),
        (lambda d: d["attempts"][0].update(answered_at=_future(3)), "attempts[0]: `answered_at`"),
        (lambda d: d["attempts"][0].update(local_time=_future(3)[:19], utc_offset_min=0), "attempts[0]: `local_time`"),
        (lambda d: d["grade_runs"][0].update(run_at=_future(2)), "grade_runs[0]: `run_at`"),
        (lambda d: d["sessions"][0].update(started_at="9999-01-01T00:00:00"), "sessions[0]: `started_at`"),
        (lambda d: d.update(version=0), "`version` must be a whole number from 1 to 1, not 0"),
        (lambda d: d.update(version=True), "`version` must be a whole number from 1 to 1, not true"),
        (lambda d: d.update(version=1.0), "not 1.0"),
        (lambda d: d["attempts"][0].update(time_limit=2**70), f"attempts[0]: `time_limit` {2**70} does not fit a 64-bit integer"),
        (lambda d: d["attempts"][1].update(session_id=[1]), "attempts[1]: `session_id` must be text or a number, not [1]"),
        (lambda d: d["sessions"][0].update(ref=[1]), "sessions[0]: `ref` must be a session's `ref`"),
        (lambda d: d["attempts"][0].update(correct="yes"), 'attempts[0]: `correct` must be 0, 1, true or false, not "yes"'),
        (lambda d: d["attempts"][0].update(timed_out=2), "attempts[0]: `timed_out` must be 0, 1, true or false, not 2"),
        (lambda d: d["grade_runs"][0].update(passed=0.5), "grade_runs[0]: `passed` must be 0, 1, true or false, not 0.5"),
        (lambda d: d["attempts"][0].update(rating=0), "attempts[0]: `rating` must be a rating from 1 to 4, not 0"),
        (lambda d: d["attempts"][0].update(level="L9"), 'attempts[0]: `level` must be one of L1, L2, L3, not "L9"'),
        (lambda d: d["attempts"][0].update(seconds=-3), "attempts[0]: `seconds` must be a finite number of seconds, not negative: -3"),
        (lambda d: d["grade_runs"][0].update(seconds=float("inf")), "grade_runs[0]: `seconds` must be a finite number of seconds, not negative: Infinity"),
        (lambda d: d["attempts"][0].update(answer="\ud800"), "attempts[0]: `answer` is not valid UTF-8 text (a lone surrogate)"),
        (lambda d: d["attempts"][0].update(answered_at="1999-12-31T23:59:59+00:00"), "attempts[0]: `answered_at` 1999-12-31T23:59:59+00:00 is before 2000"),
        (lambda d: d["sessions"][0].update(started_at="1970-01-01T00:00:00"), "sessions[0]: `started_at` 1970-01-01T00:00:00 is before 2000"),
        (lambda d: d["review_state"][0].update(card="{broken"), "review_state[0]: `card` must be a review card: a JSON object as text"),
        (lambda d: d["review_state"][0].update(card="[1, 2]"), "review_state[0]: `card` must be a review card"),
        (lambda d: d["config"].update({"lang": "\udc80"}), "`config` holds text that is not valid UTF-8"),
    ],
)
def test_hostile_rows_are_refused_naming_the_row(tmp_path, monkeypatch, edit, message):
    path = _export_with(tmp_path, monkeypatch, edit)
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "a"))
    result = runner.invoke(app, ["history", "import", path])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert connect().execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 0


def test_json_booleans_are_stored_as_0_and_1(tmp_path, monkeypatch):
    def edit(data):
        for attempt in data["attempts"]:
            attempt.update(correct=True, timed_out=False)
        data["grade_runs"][0].update(passed=False)

    path = _export_with(tmp_path, monkeypatch, edit)
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "a"))
    assert runner.invoke(app, ["history", "import", path]).exit_code == 0
    conn = connect()
    assert [tuple(r) for r in conn.execute("SELECT correct, timed_out FROM attempts")] == [(1, 0), (1, 0)]
    assert [tuple(r) for r in conn.execute("SELECT passed FROM grade_runs")] == [(0,)]


def test_bytes_that_are_not_utf8_are_refused_naming_the_line(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"format": "drill-history",\n "version": 1, "config": {"lang": "caf\xe9"}}')
    result = runner.invoke(app, ["history", "import", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert f"{path}:2: not UTF-8 text" in line


def test_a_time_within_the_clock_skew_is_accepted(tmp_path, monkeypatch):
    path = _export_with(tmp_path, monkeypatch, lambda d: d["attempts"][0].update(answered_at=_future(0.5)))
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "a"))
    assert runner.invoke(app, ["history", "import", path]).exit_code == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "drill-history",\n "version": 1,\n "attempts": ' + "[" * 200_000 + "]" * 200_000 + "}", ":3: nested more than 100 levels deep"),
        ('{"format": "drill-history", "version": 1,\n "attempts": [{"rating": ' + "9" * 5000 + "}]}", ":2: a number with thousands of digits"),
    ],
)
def test_files_no_parser_should_read_are_one_line(tmp_path, text, message):
    path = tmp_path / "hostile.json"
    path.write_text(text)
    result = runner.invoke(app, ["history", "import", str(path)])
    assert result.exit_code == 2 and result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = result.stderr.strip().splitlines()
    assert f"{path}{message}" in line
