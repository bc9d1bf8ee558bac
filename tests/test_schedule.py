"""The two FSRS presets and the interval shown on each rating button."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Card, Rating

from drill.practice.schedule import QUESTIONS, TASKS, preview
from drill.text.intervals import interval_text

NOW = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)


def test_preview_does_not_change_the_card():
    card = Card(card_id=7, due=NOW)
    before = card.to_json()
    preview(QUESTIONS, card, NOW)
    assert card.to_json() == before


def test_a_new_question_comes_back_within_the_sitting_but_a_task_not_before_tomorrow():
    card = Card(card_id=7, due=NOW)
    questions, tasks = preview(QUESTIONS, card, NOW), preview(TASKS, card, NOW)
    assert questions[Rating.Again] < timedelta(hours=1)
    assert min(tasks.values()) >= timedelta(days=1)
    for intervals in (questions, tasks):
        ordered = [intervals[r] for r in (Rating.Again, Rating.Hard, Rating.Good, Rating.Easy)]
        assert ordered == sorted(ordered) and len(set(ordered)) == 4


def test_intervals_grow_after_a_good_review_of_a_task():
    card, _ = TASKS.review_card(Card(card_id=7, due=NOW), Rating.Good, review_datetime=NOW)
    later = card.due
    assert preview(TASKS, card, later)[Rating.Good] > later - NOW


@pytest.mark.parametrize(
    ("delta", "en", "zh"),
    [
        (timedelta(seconds=20), "<1m", "<1 分钟"),
        (timedelta(minutes=10), "10m", "10 分钟"),
        (timedelta(hours=5), "5h", "5 小时"),
        (timedelta(days=4), "4d", "4 天"),
        (timedelta(days=45), "1.5mo", "1.5 个月"),
        (timedelta(days=730), "2y", "2 年"),
    ],
)
def test_interval_text(delta, en, zh):
    assert interval_text(delta) == en
    assert interval_text(delta, "zh") == zh
