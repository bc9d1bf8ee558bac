"""drill stats: accuracy rules, timing, weakest topics, whiteboard bests, JSON and no torch."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

from typer.testing import CliRunner

from drill.history import stats
from drill.cli import app
from drill.history.store import connect
from practice import add_attempt, add_run

runner = CliRunner()
T = datetime(2024, 6, 1, 10)


def seed(conn) -> None:
    for correct in (1, 1, 0):
        add_attempt(conn, T, topic="masks", level="L1", correct=correct, seconds=20, time_limit=30)
    for rating in (1, 2, 3, 4):  # open questions: Good and Easy count as correct
        add_attempt(conn, T, topic="rope", level="L2", type="open", correct=None, rating=rating, seconds=100, time_limit=90, timed_out=rating == 1)
    add_attempt(conn, T, topic="kv-cache", level="L2", correct=0, time_limit=None)  # too few attempts to judge
    add_run(conn, T, task="mha", passed=0, seconds=200)
    add_run(conn, T, task="mha", passed=1, seconds=500)
    add_run(conn, T, task="mha", passed=1, seconds=400)
    add_run(conn, T, task="causal-mask", passed=1, seconds=90, source="grade")  # not whiteboard


def test_accuracy_uses_correct_for_objective_and_rating_for_open():
    conn = connect()
    seed(conn)
    s = stats.collect(conn)
    assert (s.attempts, s.correct) == (8, 4)
    assert {a.key: (a.attempts, a.correct) for a in s.by_topic} == {"kv-cache": (1, 0), "masks": (3, 2), "rope": (4, 2)}
    assert {a.key: (a.attempts, a.correct) for a in s.by_level} == {"L1": (3, 2), "L2": (5, 2)}


def test_timing_weakest_and_whiteboard():
    conn = connect()
    seed(conn)
    s = stats.collect(conn)
    l2 = next(t for t in s.timing if t.level == "L2")
    assert (l2.attempts, l2.avg_seconds, l2.avg_limit, l2.timed_out) == (5, 82.0, 90.0, 1)
    assert [a.key for a in s.weakest] == ["rope", "masks"]
    assert [(w.task, w.runs, w.passed, w.best_seconds) for w in s.whiteboard] == [("mha", 3, 2, 400.0)]


def test_stats_json():
    seed(connect())
    result = runner.invoke(app, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["attempts"] == 8
    assert data["accuracy_by_level"]["L1"] == {"attempts": 3, "correct": 2, "accuracy": 0.6667}
    assert data["accuracy_by_topic"]["rope"]["accuracy"] == 0.5
    assert data["weakest_topics"][0] == {"topic": "rope", "attempts": 4, "correct": 2, "accuracy": 0.5, "command": "drill quiz --topic rope"}
    assert data["practice_days"] == 1 and data["longest_streak"] == 1
    assert {"current_streak", "longest_streak", "practice_days", "attempts", "accuracy_by_level", "accuracy_by_topic"} <= data.keys()


def test_stats_table():
    seed(connect())
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 0, result.output
    assert "Attempts 8 · accuracy 50%" in result.stdout
    assert "drill quiz --topic rope" in result.stdout
    assert "400s" in result.stdout


def test_stats_on_an_empty_history():
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 0
    assert "No answers yet" in result.stdout


def test_stats_never_imports_torch():
    code = (
        "import sys; from typer.testing import CliRunner; from drill.cli import app;"
        "r = CliRunner().invoke(app, ['stats']); assert r.exit_code == 0, r.output; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_file_that_is_not_a_database_is_a_one_line_error(drill_home):
    (drill_home / "drill.db").write_text("not sqlite")
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 2
    assert "is not a drill database" in result.stderr and "Traceback" not in result.output
