"""Selection order and the answer → record loop, without a terminal."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from drill.practice import quiz
from drill.history import store
from drill.practice.answers import Rating
from drill.bank.load import load_paths

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"
NOW = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def bank():
    return load_paths([FIXTURE])


def ids(questions):
    return [q.id for q in questions]


def test_unseen_and_missed_first_then_due_then_soonest(bank):
    qs = list(bank.questions.values())
    last = {q.id: Rating.GOOD for q in qs} | {"fx-open": Rating.AGAIN}
    del last["fx-choice"]  # never seen
    due = {q.id: NOW + timedelta(days=i + 1) for i, q in enumerate(qs)} | {"fx-multi": NOW - timedelta(hours=1)}
    picked = ids(quiz.select(qs, last, due, count=5, seed=3, now=NOW))
    assert set(picked[:2]) == {"fx-choice", "fx-open"}
    assert picked[2] == "fx-multi"
    later = sorted((q for q in qs if q.id not in {"fx-choice", "fx-open", "fx-multi"}), key=lambda q: due[q.id])
    assert picked[3:] == ids(later[:2])


def test_no_repeats_and_count(bank):
    qs = list(bank.questions.values())
    picked = quiz.select(qs + qs, {}, {}, count=100, seed=1, now=NOW)
    assert sorted(ids(picked)) == sorted(bank.questions)
    assert len(quiz.select(qs, {}, {}, count=3, seed=1, now=NOW)) == 3


def test_seed_is_reproducible(bank):
    qs = list(bank.questions.values())
    assert ids(quiz.select(qs, {}, {}, 8, seed=7, now=NOW)) == ids(quiz.select(qs, {}, {}, 8, seed=7, now=NOW))


def test_time_limit(bank):
    assert quiz.time_limit(bank.get("fx-choice")) == 30  # the question's own
    assert quiz.time_limit(bank.get("fx-deep-2")) == 90  # L2 default
    assert quiz.time_limit(bank.get("fx-deep-3")) == 120  # L3 default
    assert quiz.time_limit(bank.get("fx-choice"), 15) == 15  # --time wins


class Script:
    """A reader that answers from a list and raises an exception object when it finds one."""

    def __init__(self, *items):
        self.items = list(items)

    def _next(self):
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def answer(self, q, limit, strict):
        text, seconds = self._next()
        return quiz.Reply(text, seconds, cut_off=strict and seconds > limit)

    def rating(self, buttons=""):
        return Rating(self._next())


class Silent:
    def question(self, *args):
        pass

    def recap(self, *args):
        pass

    def feedback(self, result):
        pass


def test_run_records_each_answer(bank):
    conn = store.connect()
    qs = [bank.get("fx-choice"), bank.get("fx-numeric"), bank.get("fx-open")]
    summary = quiz.run(conn, qs, Script(("b", 3.0), ("9", 40.0), ("variance", 5.0), 4), Silent(), quiz.Settings())
    assert summary.complete
    rows = store.attempts(conn, summary.session_id)
    assert [(r["question_id"], r["correct"], r["rating"], r["timed_out"]) for r in rows] == [
        ("fx-choice", 1, Rating.GOOD, 0),
        ("fx-numeric", 0, Rating.AGAIN, 1),
        ("fx-open", None, Rating.EASY, 0),
    ]
    assert conn.execute("SELECT status FROM sessions").fetchone()[0] == "complete"
    assert {r[0] for r in conn.execute("SELECT question_id FROM review_state")} == {q.id for q in qs}


def test_soft_overtime_is_hard_and_strict_cutoff_is_again(bank):
    conn = store.connect()
    q = bank.get("fx-choice")
    soft = quiz.run(conn, [q], Script(("b", 45.0)), Silent(), quiz.Settings())
    strict = quiz.run(conn, [q], Script(("b", 45.0)), Silent(), quiz.Settings(strict=True))
    assert soft.results[0].rating == Rating.HARD and soft.results[0].over_time
    assert strict.results[0].rating == Rating.AGAIN and strict.results[0].cut_off


def test_interrupt_keeps_answers_and_marks_incomplete(bank):
    conn = store.connect()
    qs = [bank.get("fx-choice"), bank.get("fx-numeric"), bank.get("fx-open")]
    summary = quiz.run(conn, qs, Script(("b", 1.0), ("4", 1.0), KeyboardInterrupt()), Silent(), quiz.Settings())
    assert summary.stopped == "interrupt" and len(summary.results) == 2
    assert len(store.attempts(conn, summary.session_id)) == 2
    assert conn.execute("SELECT status FROM sessions WHERE id = ?", (summary.session_id,)).fetchone()[0] == "incomplete"


def test_open_answer_saved_before_rating(bank):
    """Interrupted at the self-rating: the typed answer is already saved, as Again until rated."""
    conn = store.connect()
    summary = quiz.run(conn, [bank.get("fx-open")], Script(("my long answer", 20.0), KeyboardInterrupt()), Silent(), quiz.Settings())
    (row,) = store.attempts(conn, summary.session_id)
    assert row["answer"] == "my long answer" and row["rating"] == Rating.AGAIN
    assert not summary.results[0].rated


def test_reveal_end_rates_after_all_answers(bank):
    conn = store.connect()
    qs = [bank.get("fx-open"), bank.get("fx-choice")]
    summary = quiz.run(conn, qs, Script(("variance", 2.0), ("b", 1.0), 3), Silent(), quiz.Settings(reveal="end"))
    assert [r.rating for r in summary.results] == [Rating.GOOD, Rating.GOOD]
    assert [r["rating"] for r in store.attempts(conn, summary.session_id)] == [3, 3]


def test_stop_at_ends_early(bank):
    conn = store.connect()
    summary = quiz.run(conn, [bank.get("fx-choice")], Script(), Silent(), quiz.Settings(), stop_at=0.0)
    assert summary.complete and summary.results == []
