"""Commands never crash on a time stored in the database, however wrong (far future, year 1, not a time)."""

from __future__ import annotations

from datetime import datetime

import pytest
from typer.testing import CliRunner

from drill.history.store import connect
from practice import add_attempt

runner = CliRunner()
BAD_TIMES = ["9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+00:00", "yesterday", "2024-13-45T99:00:00"]


@pytest.fixture
def hostile_history(drill_home):
    conn = connect()
    add_attempt(conn, datetime(2024, 6, 1, 9), topic="masks", rating=3)  # one sane attempt beside them
    for i, stamp in enumerate(BAD_TIMES):
        conn.execute(
            "INSERT INTO attempts (uid, question_id, question_hash, level, topic, type, answer, correct, rating, seconds,"
            " answered_at, local_time, utc_offset_min) VALUES (?, ?, 'h', 'L1', 'masks', 'choice', 'x', 0, 1, 3, ?, ?, 0)",
            (f"bad-{i}", "mask-before-softmax" if i % 2 else "masks-q", stamp, stamp[:19]),
        )
        conn.execute(
            "INSERT INTO grade_runs (uid, task, file, source, passed, codes, run_at, local_time, utc_offset_min)"
            " VALUES (?, 'sdpa', 'f.py', 'whiteboard', ?, '[\"mask-after-softmax\"]', ?, ?, 0)",
            (f"run-{i}", i % 2, stamp, stamp[:19]),
        )
    conn.execute("INSERT INTO sessions (uid, kind, started_at) VALUES ('s-bad', 'quiz', '9999-12-31T23:59:59+00:00')")
    conn.close()


@pytest.mark.parametrize(
    "command",
    [
        ["quiz", "--count", "1"],
        ["review", "--limit", "1"],
        ["stats"],
        ["stats", "--json"],
        ["streak"],
        ["streak", "--json"],
        ["tasks"],
        ["history", "export", "out.json"],
    ],
)
def test_commands_survive_bad_stored_times(hostile_history, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app_(), command, input="")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output  # 1: the quiz met the end of stdin


def test_far_future_days_do_not_count_toward_the_streak(hostile_history):
    from drill.history import streak

    rep = streak.report(connect(), now=datetime(2024, 6, 1, 12))
    assert rep.streak.current == 0 and rep.streak.longest == 0  # one answer is under the daily goal of 5
    assert rep.today_day.answered == 1


def app_():
    from drill.cli import app

    return app
