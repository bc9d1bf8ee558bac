"""Bare `drill`: today's plan, and the one command it recommends from the history."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from drill.history import store
from drill.practice import task_review
from drill.whiteboard import catalog
from drill.cli import app
from practice import BANK_YAML, QUESTION, add_attempt, add_run

runner = CliRunner()


@pytest.fixture
def bank(tmp_path) -> Path:
    path = tmp_path / "bank.yaml"
    path.write_text(BANK_YAML.format(questions=QUESTION.format(id="masks-q", level="L1", topic="masks", type="open", extra="")), encoding="utf-8")
    return path


def plan(bank: Path) -> dict:
    result = runner.invoke(app, ["today", "--json", "--bank", str(bank)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_bare_drill_shows_the_plan_and_exits_0():
    result = runner.invoke(app, [])
    assert result.exit_code == 0, result.output
    assert "Next › drill quiz" in result.output
    assert "0/5 questions" in result.output


def test_help_still_lists_every_command():
    for flag in ("--help", "-h"):
        result = runner.invoke(app, [flag])
        assert result.exit_code == 0
        assert "whiteboard" in result.output and "Usage" in result.output


def test_a_forgotten_question_makes_review_the_next_command(bank):
    conn = store.connect()
    with store.transaction(conn):
        add_attempt(conn, datetime.now() - timedelta(days=3), rating=1, correct=0)  # Again three days ago: due now
    got = plan(bank)
    assert got["due_questions"] == 1
    assert got["next_command"] == "drill review"


def test_a_failed_task_comes_before_new_questions(bank):
    conn = store.connect()
    with store.transaction(conn):
        add_run(conn, datetime.now() - timedelta(hours=1), task="mha", passed=0)
    got = plan(bank)
    assert got["failed_tasks"] == ["mha"]
    assert got["next_command"] == "drill whiteboard mha"


def test_nothing_due_names_the_next_due_date_and_the_weakest_topic(bank):
    conn = store.connect()
    with store.transaction(conn):
        for minutes in (3, 2, 1):  # wrong but rated Good: not due for days, yet the topic is weak
            add_attempt(conn, datetime.now() - timedelta(minutes=minutes), correct=0, rating=3)
    got = plan(bank)
    assert got["due_questions"] == 0 and got["next_due"] is not None
    assert got["weakest_topic"] == "masks"
    assert got["today"] == {"answered": 3, "whiteboard_passed": 0, "goal": 5, "met": False}
    assert got["next_command"] == "drill quiz --topic masks"
    shown = runner.invoke(app, ["today", "--bank", str(bank)]).output
    assert "nothing now; the next one is due in " in shown and "masks" in shown


def test_goal_met_moves_on_to_the_next_whiteboard_task(bank):
    conn = store.connect()
    with store.transaction(conn):
        add_run(conn, datetime.now() - timedelta(minutes=5), task="sdpa", passed=1)  # a whiteboard pass meets the goal
    got = plan(bank)
    assert got["today"]["met"]
    first_open = next(task for task in catalog.load() if task != "sdpa")  # the catalog's order, sdpa done
    assert got["next_command"] == f"drill whiteboard {first_open}"


def test_the_plan_in_chinese():
    result = runner.invoke(app, ["today", "--lang", "zh"])
    assert result.exit_code == 0
    assert "今日目标" in result.output and "下一步 › drill quiz" in result.output
    assert "Goal" not in result.output and "Next" not in result.output


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_bare_drill_in_a_real_terminal(drill_home):
    env = {**os.environ, "DRILL_HOME": str(drill_home), "LANG": "en_US.UTF-8", "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, ["-m", "drill"], env=env, encoding="utf-8", timeout=20, dimensions=(30, 80),
                          cwd=str(Path(__file__).parent.parent))  # fmt: skip
    child.expect("Streak")
    child.expect(r"Next ›(?:\x1b\[[0-9;]*m|\s)*drill quiz")  # colours between the words
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_review_with_nothing_due_says_when_the_next_question_is(bank):
    conn = store.connect()
    with store.transaction(conn):
        add_attempt(conn, datetime.now() - timedelta(minutes=1), correct=1, rating=3)
    result = runner.invoke(app, ["review", "--json", "--bank", str(bank)])
    assert result.exit_code == 0, result.output
    when = datetime.fromisoformat(json.loads(result.output)["next_due"])
    assert when > datetime.now(when.tzinfo)  # Good on a new card: due later, not now
    shown = runner.invoke(app, ["review", "--lang", "zh", "--bank", str(bank)]).output
    assert "下一题" in shown and "后（" in shown and when.astimezone().strftime("%H:%M") in shown


def test_a_due_whiteboard_task_comes_right_after_due_questions(bank):
    conn = store.connect()
    week_ago = datetime.now().astimezone() - timedelta(days=7)
    task_review.record(conn, task_review.Session("gqa", False, 0, 3, 1200.0, 1200.0), week_ago)  # unsolved: Again, due next day
    with store.transaction(conn):
        add_run(conn, datetime.now() - timedelta(hours=1), task="gqa", passed=0)
    got = plan(bank)
    assert got["due_tasks"] == ["gqa"] and got["failed_tasks"] == []  # counted once, as due
    assert got["next_command"] == "drill review --tasks"
    shown = runner.invoke(app, ["today", "--bank", str(bank)]).output
    assert "1 due for review: gqa" in shown
    nothing = runner.invoke(app, ["review", "--bank", str(bank)])
    assert nothing.exit_code == 0 and "Whiteboard task due too: gqa (drill review --tasks)" in nothing.output


def test_review_tasks_with_nothing_due():
    result = runner.invoke(app, ["review", "--tasks", "--lang", "zh"])
    assert result.exit_code == 0
    assert "做过一道" in result.output


def test_a_topic_with_every_answer_right_is_never_the_weakest(bank):
    conn = store.connect()
    with store.transaction(conn):
        for minutes in (3, 2, 1):
            add_attempt(conn, datetime.now() - timedelta(minutes=minutes), correct=1, rating=3)
    assert plan(bank)["weakest_topic"] is None
    assert json.loads(runner.invoke(app, ["stats", "--json"]).output)["weakest_topics"] == []
