"""History export/import: round trip, idempotent merge of two machines, bad files rejected whole."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from typer.testing import CliRunner

from drill import config
from drill.cli import app
from drill.store import connect, start_session
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
    for table in ("sessions", "attempts", "grade_runs", "review_state"):
        assert len(merged[table]) == len(a_before[table]) + len(b_before[table])
        assert all(r in merged[table] for r in a_before[table] + b_before[table]), table
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
        (lambda d: d["attempts"][1].update(rating=9), "attempts[1]: rejected by the database"),
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
