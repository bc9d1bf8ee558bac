"""Streaks read from the database: stored local days, time zones, DST, settings and the CLI."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from drill import config
from drill.history import streak
from drill.cli import app
from drill.history.store import connect
from drill.text.messages import translated
from practice import add_attempt, add_run

NOW = datetime(2024, 6, 30, 12, 0)
ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Auckland", "America/Los_Angeles", "UTC"]
runner = CliRunner()


def memory_db():
    conn = connect(Path(":memory:"))
    config.set_value(conn, "daily-goal", "1")
    return conn


events = st.lists(
    st.tuples(st.datetimes(datetime(2023, 1, 1), datetime(2024, 6, 30, 11)), st.integers(-12 * 60, 14 * 60)), max_size=40
)


@settings(max_examples=60, deadline=None)
@given(events, st.lists(st.integers(-12 * 60, 14 * 60), min_size=40, max_size=40))
def test_travel_never_moves_a_past_day(events, other_offsets):
    """Same local wall clocks, different UTC instants (another zone): the same days and streak."""
    home, away = memory_db(), memory_db()
    for (local, offset), other in zip(events, other_offsets):
        add_attempt(home, local, offset)
        add_attempt(away, local, other)
    a, b = streak.report(home, NOW), streak.report(away, NOW)
    assert a.days == b.days and a.streak == b.streak


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 23), st.data())
def test_daily_practice_across_dst_and_travel_counts_every_day_once(n, hour, data):
    """Practising once a day, each time in some zone, through DST changes: n days, an n-day streak."""
    conn = memory_db()
    config.set_value(conn, "day-start-hour", str(hour))
    first = date(2024, 3, 1)  # spans the northern spring and southern autumn DST changes
    for i in range(n):
        zone = ZoneInfo(data.draw(st.sampled_from(ZONES)))
        since_day_start = timedelta(minutes=data.draw(st.integers(60, 22 * 60)))  # margin for a DST gap
        wall = datetime.combine(first + timedelta(days=i), time(hour)) + since_day_start
        instant = wall.replace(tzinfo=zone).astimezone(timezone.utc)
        local = instant.astimezone(zone)
        add_attempt(conn, local.replace(tzinfo=None), int(local.utcoffset().total_seconds() // 60))
    last_day = first + timedelta(days=n - 1)
    rep = streak.report(conn, datetime.combine(last_day, time(hour)) + timedelta(hours=23))
    assert sorted(rep.days) == [first + timedelta(days=i) for i in range(n)]
    assert rep.streak.current == rep.streak.longest == rep.streak.practice_days == n


def test_practice_at_one_am_counts_for_the_day_before():
    conn = memory_db()
    add_attempt(conn, datetime(2024, 6, 30, 1, 0))
    assert list(streak.report(conn, NOW).days) == [date(2024, 6, 29)]
    config.set_value(conn, "day-start-hour", "0")
    assert list(streak.report(conn, NOW).days) == [date(2024, 6, 30)]


def test_goal_is_five_answers_or_one_whiteboard_pass():
    conn = connect()
    for minute in range(4):
        add_attempt(conn, datetime(2024, 6, 28, 10, minute))
    add_run(conn, datetime(2024, 6, 29, 10), passed=1)
    add_run(conn, datetime(2024, 6, 30, 10), passed=1, source="grade")  # grading a file is not whiteboard practice
    rep = streak.report(conn, NOW)
    assert rep.streak.goal_days == {date(2024, 6, 29)}
    assert streak.streak_line(conn, NOW) == "Streak: 1 day · today 0/5 questions"
    add_attempt(conn, datetime(2024, 6, 28, 10, 5))
    assert streak.report(conn, NOW).streak.goal_days == {date(2024, 6, 28), date(2024, 6, 29)}


def test_streak_line_mentions_freezes_and_is_empty_when_off():
    conn = memory_db()
    for i in range(7):
        add_attempt(conn, datetime(2024, 6, 24 + i, 10))
    assert streak.streak_line(conn, NOW) == "Streak: 7 days · today goal met · 1 freeze held"
    assert translated(streak.streak_line(conn, NOW), "zh") == "连续打卡 7 天 · 今日目标已完成 · 持有 1 次冻结"
    config.set_value(conn, "streaks", "off")
    assert streak.streak_line(conn, NOW) is None


def test_streak_command_shows_numbers_and_heatmap():
    conn = connect()
    now = datetime.now().replace(microsecond=0)
    for _ in range(6):
        add_attempt(conn, now)
    result = runner.invoke(app, ["streak"])
    assert result.exit_code == 0, result.output
    assert "Current streak  1 day (alive)" in result.stdout
    assert "Today           goal met" in result.stdout
    assert "◆" in result.stdout and "Mon" in result.stdout
    data = json.loads(runner.invoke(app, ["streak", "--json"]).stdout)
    assert (data["current_streak"], data["practice_days"], data["today"]["answered"]) == (1, 1, 6)


def test_streak_command_when_streaks_are_off():
    config.set_value(connect(), "streaks", "off")
    result = runner.invoke(app, ["streak"])
    assert result.exit_code == 0
    assert "Streaks are off" in result.stdout
