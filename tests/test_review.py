"""FSRS review state derived from the attempt log, and `drill review`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.practice import review
from drill.history import store
from drill.practice.answers import Rating
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
    assert first["scheduler"] == review.scheduler_tag()
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
    assert json.loads(result.stdout) == {"kind": "review", "status": "nothing-due", "next_due": None, "due_tasks": [], "answered": 0, "total": 0, "results": []}


class Scripted:
    """Answers by question id, an open answer's self-rating from ``ratings``; renders nothing."""

    def __init__(self, ratings):
        self.ratings, self.asked = iter(ratings), None

    def answer(self, q, limit, strict):
        from drill.practice.quiz import Reply

        self.asked = q
        return Reply({"choice": "b", "numeric": "7 GiB"}.get(q.type, "the variance grows"), 1.0)

    def rating(self, buttons=""):
        return next(self.ratings)

    def question(self, n, total, q, limit): ...
    def recap(self, n, total, q): ...
    def feedback(self, result): ...


@pytest.mark.parametrize("reveal", ["each", "end"])
def test_answers_update_cards_step_by_step_as_a_replay_would(drill_home, bank, monkeypatch, reveal):
    """Each answer is one scheduler step on the stored card, never a replay of the question's whole log."""
    import json

    from drill.practice import quiz

    conn, replays = store.connect(), []
    monkeypatch.setattr(review, "rebuild", lambda conn, qid: replays.append(qid))
    questions = bank.select(topics=["fx-quiz"])
    for rating in (Rating.GOOD, Rating.AGAIN, Rating.EASY):
        script = Scripted([rating])
        summary = quiz.run(conn, questions, script, script, quiz.Settings(reveal=reveal))
        assert summary.complete and len(summary.results) == len(questions)
    assert replays == []
    for qid, card in conn.execute("SELECT question_id, card FROM review_state"):
        log = [tuple(r) for r in conn.execute("SELECT answered_at, rating FROM attempts WHERE question_id = ? ORDER BY answered_at, id", (qid,))]
        assert len(log) == 3
        assert json.loads(card) == json.loads(review.replay(qid, log).to_json())


def test_a_card_behind_the_log_is_replayed_when_answered(drill_home, bank):
    """An attempt that came in without a card (an import, another writer): the next answer replays the whole log."""
    conn, q = store.connect(), bank.get("fx-open")
    log(conn, q, (0, Rating.GOOD), (2, Rating.HARD))
    with store.transaction(conn):
        uid = store.insert_attempt(conn, session_id=None, question=q, answer="", correct=None, rating=Rating.EASY, seconds=1,
                                   time_limit=60, timed_out=False, now=T0 + timedelta(days=5))  # fmt: skip
        review.record(conn, q.id, uid)
    entries = [tuple(r) for r in conn.execute("SELECT answered_at, rating FROM attempts ORDER BY answered_at")]
    assert card_row(conn, q.id)[0] == review.replay(q.id, entries).to_json()


def test_the_scheduler_tag_carries_the_installed_fsrs_version():
    from importlib.metadata import version

    assert review.fsrs_version() == version("fsrs")
    assert review.scheduler_tag().startswith(f"fsrs {version('fsrs')}/")
