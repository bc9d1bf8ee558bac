"""FSRS review state derived from the attempt log, and `drill review`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill import review, store
from drill.answers import Rating
from drill.bank.load import load_paths
from drill.cli import app

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"
T0 = datetime(2025, 1, 1, 9, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def bank():
    return load_paths([FIXTURE])


def log(conn, q, *entries):
    """Record attempts (days after T0, rating) the way other writers (history import) would: without review state."""
    with store.transaction(conn):
        for days, rating in entries:
            store.insert_attempt(conn, session_id=None, question=q, answer="", correct=None, rating=rating, seconds=1, time_limit=60, timed_out=False, now=T0 + timedelta(days=days))


def card_row(conn, qid):
    return conn.execute("SELECT card, due, scheduler FROM review_state WHERE question_id = ?", (qid,)).fetchone()


def test_replay_schedules_by_rating():
    again = review.replay("q", [("2025-01-01T09:00:00+00:00", Rating.AGAIN)])
    good = review.replay("q", [("2025-01-01T09:00:00+00:00", Rating.GOOD)])
    easy = review.replay("q", [("2025-01-01T09:00:00+00:00", Rating.EASY)])
    assert again.due < good.due < easy.due
    streak = review.replay("q", [(f"2025-01-{d:02d}T09:00:00+00:00", Rating.GOOD) for d in (1, 2, 5, 15)])
    assert streak.due - datetime(2025, 1, 15, 9, tzinfo=timezone.utc) > timedelta(days=7)


def test_state_is_rebuilt_from_the_log(bank):
    conn = store.connect()
    q = bank.get("fx-open")
    log(conn, q, (0, 3), (1, 3), (4, 1))
    assert card_row(conn, q.id) is None
    assert review.sync(conn) == [q.id]
    first = card_row(conn, q.id)
    assert first["scheduler"] == review.SCHEDULER_TAG
    assert review.sync(conn) == []  # up to date: nothing rebuilt

    conn.execute("DELETE FROM review_state")  # lost cache
    review.sync(conn)
    assert tuple(card_row(conn, q.id)) == tuple(first)

    conn.execute("UPDATE review_state SET scheduler = 'fsrs 5.0.0/1', card = '{\"old\": true}'")  # older library format
    assert review.sync(conn) == [q.id]
    assert tuple(card_row(conn, q.id)) == tuple(first)

    log(conn, q, (5, 3))  # a new attempt written without updating the cache
    assert review.sync(conn) == [q.id]
    assert card_row(conn, q.id)["due"] > first["due"]


def test_due_now(bank):
    conn = store.connect()
    log(conn, bank.get("fx-open"), (0, 1))
    log(conn, bank.get("fx-choice"), (0, 4))
    known = set(bank.questions)
    assert review.due_now(conn, known, now=T0 + timedelta(hours=1)) == ["fx-open"]
    assert review.due_now(conn, known, now=T0 + timedelta(days=365)) == ["fx-open", "fx-choice"]
    assert review.due_now(conn, {"fx-choice"}, now=T0 + timedelta(days=365)) == ["fx-choice"]


def test_review_command_asks_due_questions(bank):
    conn = store.connect()
    log(conn, bank.get("fx-choice"), (0, 1))
    log(conn, bank.get("fx-numeric"), (0, 1))
    runner = CliRunner()
    result = runner.invoke(app, ["review", "--bank", str(FIXTURE), "--limit", "1", "--lang", "en"], input="b\n")
    assert result.exit_code == 0, result.output
    assert "1/1" in result.stdout and "✔ right" in result.stdout
    kinds = [r[0] for r in conn.execute("SELECT s.kind FROM attempts a JOIN sessions s ON s.id = a.session_id")]
    assert kinds == ["review"]


def test_review_with_nothing_due():
    result = CliRunner().invoke(app, ["review", "--bank", str(FIXTURE)])
    assert result.exit_code == 0 and "Nothing is due" in result.stdout


def test_review_json_with_nothing_due_is_still_json(drill_home):
    import json

    result = CliRunner().invoke(app, ["review", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"kind": "review", "status": "nothing-due", "next_due": None, "answered": 0, "total": 0, "results": []}
