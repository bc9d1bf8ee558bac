"""`drill review --optimize`: the count of reviews FSRS's optimizer learns from, the fitted parameters
stored in config, and every question's card replayed under them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from drill import config
from drill.practice import optimize, review, schedule
from drill.history import store
from drill.bank.load import load_bank
from drill.cli import app

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"
T0 = datetime(2025, 1, 1, 9, tzinfo=timezone.utc)


def answer(conn, q, when: datetime, rating: int) -> None:
    with store.transaction(conn):
        store.insert_attempt(conn, session_id=None, question=q, answer="x", correct=None, rating=rating, seconds=5.0,
                             time_limit=60, timed_out=False, now=when)  # fmt: skip


def test_only_reviews_a_day_after_the_previous_one_count(drill_home):
    conn = store.connect()
    q = load_bank([FIXTURE]).get("fx-open")
    for when in (T0, T0 + timedelta(minutes=10), T0 + timedelta(hours=23), T0 + timedelta(days=2), T0 + timedelta(days=9)):
        answer(conn, q, when, 3)
    assert optimize.countable(optimize._logs(conn)) == 2  # +10 min and +23 h are same-sitting reviews
    result = CliRunner().invoke(app, ["review", "--optimize", "--lang", "en"])
    assert result.exit_code == 0
    assert "2 of the 512 reviews needed" in " ".join(result.stdout.split()) and "510 more to go" in result.stdout
    assert config.get(conn, "fsrs-parameters") is None
    zh = " ".join(CliRunner().invoke(app, ["review", "--optimize", "--lang", "zh"]).stdout.split())
    assert "还差 510 次" in zh


def test_stored_parameters_change_the_cards_tag_and_replay_them(drill_home):
    conn = store.connect()
    q = load_bank([FIXTURE]).get("fx-open")
    answer(conn, q, T0, 3)
    answer(conn, q, T0 + timedelta(days=3), 3)
    review.sync(conn)
    before = conn.execute("SELECT due, scheduler FROM review_state").fetchone()
    weights = list(schedule.QUESTIONS.parameters)
    weights[2] = 10.0  # initial stability after Good: 10 days instead of FSRS's 2.3
    config.set_value(conn, "fsrs-parameters", json.dumps(weights))
    assert review.sync(conn) == [q.id]  # the tag changed: replayed
    after = conn.execute("SELECT due, scheduler FROM review_state").fetchone()
    assert after[1] != before[1] and after[0] > before[0]
    with pytest.raises(Exception, match="FSRS weights"):
        config.set_value(conn, "fsrs-parameters", "[1, 2, 3]")


@pytest.mark.slow
def test_enough_reviews_are_fitted_and_used(drill_home):
    pytest.importorskip("pandas")
    conn = store.connect()
    bank = load_bank([FIXTURE])
    questions = list(bank.questions.values())
    for n in range(130):  # 130 cards x 5 spaced reviews = 520 countable
        q = questions[n % len(questions)]
        q = msgspec.structs.replace(q, id=f"{q.id}-{n}")  # a card of its own
        start = T0 + timedelta(hours=n)
        for k, gap in enumerate((0, 1, 3, 8, 20, 45)):
            answer(conn, q, start + timedelta(days=gap), 1 if (n + k) % 5 == 0 else 3)
    fit = optimize.optimize(conn)
    assert fit.reviews >= optimize.MIN_REVIEWS and fit.parameters is not None
    assert json.loads(config.get(conn, "fsrs-parameters")) == fit.parameters
    tags = {tag for (tag,) in conn.execute("SELECT DISTINCT scheduler FROM review_state")}
    assert tags == {review.current(conn).tag} and tags != {review.scheduler_tag()}
