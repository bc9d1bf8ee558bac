"""The forecast: questions and tasks due today / tomorrow / in the next 7 days, on the dashboard and in `drill review`."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from drill.practice import dashboard, review, task_review
from drill.history import store
from drill.cli import app
from practice import add_attempt, write_bank

runner = CliRunner()


@pytest.fixture
def utc_clock(monkeypatch):
    """Local time is UTC, so the day boundaries below are plain numbers."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def test_days_are_practice_days_and_overdue_counts_for_today(utc_clock):
    now = at(2026, 3, 10, 10, 0)  # the practice day runs to 04:00 on the 11th
    dues = [
        at(2026, 2, 1),  # long overdue: today
        at(2026, 3, 11, 3, 59),  # today
        at(2026, 3, 11, 4, 0),  # tomorrow
        at(2026, 3, 12, 3, 59),  # tomorrow
        at(2026, 3, 17, 3, 59),  # the 7th day (the 16th's practice day)
        at(2026, 3, 17, 4, 0),  # the 8th: not in the week
    ]
    assert dashboard.forecast(dues, now, 4) == dashboard.Forecast(today=2, tomorrow=2, week=5)
    early = at(2026, 3, 11, 2, 0)  # 02:00 still belongs to the 10th's practice day
    assert dashboard.forecast([at(2026, 3, 11, 3, 0), at(2026, 3, 11, 5, 0)], early, 4) == dashboard.Forecast(1, 1, 2)
    assert dashboard.forecast([at(2026, 3, 11, 3, 0), at(2026, 3, 12, 1, 0)], early, 0) == dashboard.Forecast(1, 1, 2)  # days from midnight


def expected(dues: list[datetime], now: datetime) -> tuple[int, int, int]:
    """The forecast counted here from the stored due dates, with the default day start (04:00 local)."""
    local = now.astimezone()
    end = local.replace(hour=4, minute=0, second=0, microsecond=0)
    end += timedelta(days=1) if end <= local else timedelta(0)
    return (sum(d < end for d in dues), sum(end <= d < end + timedelta(days=1) for d in dues), sum(d < end + timedelta(days=6) for d in dues))


def seed(tmp_path) -> str:
    bank = write_bank(tmp_path / "bank", [(f"{t}-q", "L1", t, "choice") for t in "abcdef"])
    now = datetime.now()
    conn = store.connect()
    with store.transaction(conn):
        add_attempt(conn, now - timedelta(days=3), topic="a", rating=1, correct=0)  # Again: overdue
        for days, topic, rating in ((3, "b", 3), (2, "b", 3), (5, "c", 3), (4, "c", 3), (7, "d", 4), (6, "e", 4), (1, "f", 4)):
            add_attempt(conn, now - timedelta(days=days), topic=topic, rating=rating)
    for days, solved in ((3, True), (1, False)):
        task_review.record(conn, task_review.Session("sdpa", solved, 0, 0, 300, 1200), now=datetime.now(timezone.utc) - timedelta(days=days))
    return str(bank)


def test_dashboard_shows_the_forecast_of_a_seeded_history(tmp_path):
    bank = seed(tmp_path)
    conn = store.connect()
    now = datetime.now(timezone.utc)
    questions = expected([d for q, d in review.due_dates(conn).items() if q.endswith("-q")], now)
    tasks = expected([c.due for c in task_review.cards(conn).values()], now)
    assert questions[2] >= 3 and tasks[2] == 1  # the history reaches into the week

    out = runner.invoke(app, ["today", "--bank", bank, "--lang", "en"]).stdout
    assert f"Coming up      questions: {questions[0]} today · {questions[1]} tomorrow · {questions[2]} in 7 days" in out
    assert f"tasks: {tasks[0]} today · {tasks[1]} tomorrow · {tasks[2]} in 7 days" in out
    zh = runner.invoke(app, ["today", "--bank", bank, "--lang", "zh"]).stdout
    assert f"题目：今天 {questions[0]} · 明天 {questions[1]} · 7 天内 {questions[2]}" in zh and "即将到期" in zh

    got = json.loads(runner.invoke(app, ["today", "--bank", bank, "--json"]).stdout)["forecast"]
    assert got["questions"] == dict(zip(("today", "tomorrow", "next_7_days"), questions))
    assert got["tasks"] == dict(zip(("today", "tomorrow", "next_7_days"), tasks))


def test_a_fresh_history_shows_no_forecast():
    out = runner.invoke(app, ["today", "--lang", "en"]).stdout
    assert "Coming up" not in out


def test_review_shows_the_forecast_above_the_first_question(tmp_path):
    bank = seed(tmp_path)
    result = runner.invoke(app, ["review", "--bank", bank, "--lang", "en", "--limit", "1"], input="a\n")
    assert result.exit_code == 0, result.output
    head, _, rest = result.stdout.partition("Why ")
    assert "Coming up › questions: " in head and "Coming up › tasks: " in head
    assert json.loads(runner.invoke(app, ["review", "--bank", bank, "--json", "--limit", "1"], input="a\n").stdout)["kind"] == "review"


def test_the_forecast_in_a_real_terminal(tmp_path, drill_home):
    """Bare `drill` in a pseudo-terminal: styled title and next line, the forecast rows under their label."""
    import os
    import re
    import sys

    pexpect = pytest.importorskip("pexpect")
    bank = seed(tmp_path)
    env = {**os.environ, "DRILL_HOME": str(drill_home), "DRILL_BANKS": bank, "TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "drill"], env=env, encoding="utf-8", timeout=60, dimensions=(40, 100))
    child.expect(pexpect.EOF)
    screen = child.before
    assert "\x1b[1mToday\x1b[0m" in screen and "\x1b[1;32mNext ›\x1b[0m" in screen
    rows = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in screen.splitlines()]
    coming = next(i for i, line in enumerate(rows) if line.strip().startswith("Coming up"))
    assert re.search(r"questions: \d+ today · \d+ tomorrow · \d+ in 7 days", rows[coming])
    assert re.search(r"^\s+tasks: \d+ today · \d+ tomorrow · 1 in 7 days", rows[coming + 1])
    assert rows[coming + 1].index("tasks:") == rows[coming].index("questions:")  # under its label's value column
