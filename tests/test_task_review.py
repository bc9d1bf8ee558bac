"""Whiteboard tasks on an FSRS schedule: the grader's rating, once a day, replayed from the log."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating
from typer.testing import CliRunner

from drill.history import store
from drill.practice import task_review
from drill.cli import app
from drill.practice.task_review import Session

T0 = datetime(2026, 11, 2, 15, tzinfo=timezone.utc)
runner = CliRunner()


def session(solved=True, hints=0, failing_saves=0, seconds=600.0, limit_s=1200.0, task="gqa") -> Session:
    return Session(task, solved, hints, failing_saves, seconds, limit_s)


@pytest.mark.parametrize(
    ("kwargs", "rating"),
    [
        ({"solved": False}, Rating.Again),
        ({"solved": False, "hints": 0, "seconds": 10}, Rating.Again),  # quitting fast is not Easy
        ({"hints": 1}, Rating.Hard),
        ({"failing_saves": 2}, Rating.Hard),
        ({"failing_saves": 1}, Rating.Good),
        ({}, Rating.Good),
        ({"seconds": 400.0}, Rating.Easy),  # a third of the 20 minutes
        ({"seconds": 400.0, "hints": 1}, Rating.Hard),
    ],
)
def test_the_grader_rates_the_session(kwargs, rating):
    assert task_review.rate(session(**kwargs)) == rating


def test_a_task_is_rated_once_a_day_and_comes_back_on_schedule():
    conn = store.connect()
    assert task_review.record(conn, session(hints=2), T0) == Rating.Hard
    assert task_review.record(conn, session(), T0 + timedelta(hours=2)) is None  # same practice day: not rated again
    assert conn.execute("SELECT COUNT(*) FROM task_reviews").fetchone()[0] == 1
    card = task_review.cards(conn)["gqa"]
    assert timedelta(days=1) <= card.due - T0 <= timedelta(days=3)  # Hard on a new task: a couple of days, never today
    known = {"gqa", "rope"}
    assert task_review.due(conn, known, T0 + timedelta(hours=12)) == []
    assert task_review.due(conn, known, card.due) == ["gqa"]
    assert task_review.record(conn, session(), card.due) == Rating.Good
    assert task_review.cards(conn)["gqa"].due - card.due > card.due - T0  # intervals grow after a Good


def test_most_overdue_task_first():
    conn = store.connect()
    task_review.record(conn, session(task="rope", solved=False), T0)
    task_review.record(conn, session(task="gqa", solved=False), T0 + timedelta(days=1))
    assert task_review.due(conn, {"gqa", "rope"}, T0 + timedelta(days=10)) == ["rope", "gqa"]


def test_task_reviews_travel_with_the_history(tmp_path, monkeypatch):
    conn = store.connect()
    task_review.record(conn, session(), T0)
    exported = tmp_path / "h.json"
    assert runner.invoke(app, ["history", "export", str(exported)]).exit_code == 0
    assert [r["task"] for r in json.loads(exported.read_text())["task_reviews"]] == ["gqa"]
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "elsewhere"))
    for _ in range(2):  # the second import finds it already there
        result = runner.invoke(app, ["history", "import", str(exported)])
        assert result.exit_code == 0, result.output
    assert [tuple(r) for r in store.connect().execute("SELECT task, rating FROM task_reviews")] == [("gqa", int(Rating.Good))]
    assert "already here" in result.output


def test_a_dropped_task_reviews_table_is_one_line(drill_home):
    store.connect().execute("DROP TABLE task_reviews")
    result = runner.invoke(app, ["streak"])
    assert result.exit_code == 2
    assert "table `task_reviews` is missing" in result.output and "Traceback" not in result.output
