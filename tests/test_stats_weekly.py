"""`drill stats` week by week: answers and accuracy per topic over the last 8 practice weeks, as sparklines and JSON."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta

from typer.testing import CliRunner

from drill.history import stats
from drill.cli import app
from drill.history.store import connect, transaction
from drill.views.stats_view import sparkline
from practice import add_attempt

runner = CliRunner()
TODAY = date(2026, 3, 12)  # a Thursday: this practice week began on Monday the 9th


def at(day: date, hour: int = 12) -> datetime:
    return datetime(day.year, day.month, day.day, hour)


def test_weeks_run_monday_to_sunday_and_start_at_the_day_start_hour():
    conn = connect()
    with transaction(conn):
        add_attempt(conn, at(date(2026, 3, 9), 5), topic="masks", correct=1)  # this week
        add_attempt(conn, at(date(2026, 3, 9), 3), topic="masks", correct=0)  # 03:00 Monday is still Sunday's practice day
        add_attempt(conn, at(date(2026, 1, 19)), topic="masks", correct=1)  # the Monday 7 weeks back: the first week
        add_attempt(conn, at(date(2026, 1, 18)), topic="masks", correct=1)  # 8 weeks back: not charted
        add_attempt(conn, at(date(2026, 2, 4)), topic="moe", type="open", correct=None, rating=3)  # an open answer rated Good
    mondays, weekly = stats.weekly(conn, TODAY, 4)
    assert mondays[0] == date(2026, 1, 19) and mondays[-1] == date(2026, 3, 9) and len(mondays) == 8
    assert [(a.attempts, a.correct) for a in weekly["masks"]] == [(1, 1), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (1, 0), (1, 1)]
    assert [(a.attempts, a.correct) for a in weekly["moe"]][2] == (1, 1)


def test_sparkline_heights_and_gaps():
    assert sparkline([None, 1, 2, 4, 8], 8) == "·▁▂▄█"
    assert sparkline([0.0, 0.5, 0.51, 1.0, None], 1.0) == "▁▄▅█·"


def test_stats_shows_a_topic_improving_in_both_languages_and_json():
    conn = connect()
    now = datetime.now()
    with transaction(conn):
        for weeks_ago, right in ((3, 1), (2, 2), (1, 3), (0, 4)):  # 4 answers a week, more of them right each week
            for n in range(4):
                add_attempt(conn, now - timedelta(weeks=weeks_ago, hours=1), topic="masks", correct=int(n < right))
    out = runner.invoke(app, ["stats", "--lang", "en"]).stdout
    assert "Week by week (last 8 weeks, oldest first)" in out
    row = next(line for line in out.splitlines() if "masks" in line and "→" in line)
    assert "25% → 100%" in row
    zh = runner.invoke(app, ["stats", "--lang", "zh"]).stdout
    assert "按周变化（最近 8 周，从早到晚）" in zh and "每周正确率" in zh
    weekly = json.loads(runner.invoke(app, ["stats", "--json"]).stdout)["weekly"]
    assert len(weekly["weeks"]) == 8
    answered = [w for w in weekly["by_topic"]["masks"] if w["attempts"]]
    assert [w["accuracy"] for w in answered][-4:] == [0.25, 0.5, 0.75, 1.0]
