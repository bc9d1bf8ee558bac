"""Mock interviews: follow-up chains and 60-second pitches."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.practice import mock
from drill.bank.load import load_paths
from drill.cli import app
from drill.errors import DrillError

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"


@pytest.fixture(scope="module")
def bank():
    return load_paths([FIXTURE])


def test_chain_digs_from_l1_through_follow_ups(bank):
    assert [q.id for q in mock.chain(bank, ["fx-deep"], seed=0)] == ["fx-deep-1", "fx-deep-2", "fx-deep-3"]


def test_chain_without_follow_ups_is_one_question(bank):
    assert [q.id for q in mock.chain(bank, ["fx-quiz"], seed=0)][0] in {"fx-choice", "fx-numeric", "fx-open"}
    assert len(mock.chain(bank, ["fx-quiz"], seed=0)) == 1


def test_chain_and_pitch_errors(bank):
    with pytest.raises(DrillError, match="no L1 question"):
        mock.chain(bank, ["nope"])
    with pytest.raises(DrillError, match="no pitch question"):
        mock.pitch(bank, ["fx-deep"])


def test_mock_command_rates_and_records_each_step(drill_home):
    stdin = "keys and values are cached\n\n3\n" + "16384\n" + "(b, h, t, d)\n"
    result = CliRunner().invoke(app, ["mock", "--bank", str(FIXTURE), "--topic", "fx-deep", "--json", "--lang", "en"], input=stdin)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["kind"] == "mock" and summary["status"] == "complete"
    assert [(r["id"], r["rating"]) for r in summary["results"]] == [("fx-deep-1", 3), ("fx-deep-2", 3), ("fx-deep-3", 3)]
    conn = sqlite3.connect(drill_home / "drill.db")
    assert conn.execute("SELECT kind, status FROM sessions").fetchall() == [("mock", "complete")]
    assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 3


def test_a_mock_whose_clock_ran_out_ends_with_times_up(drill_home, bank):
    from io import StringIO

    from rich.console import Console

    from drill.practice import quiz
    from drill.history import store
    from drill.views.quiz_view import QuizView

    summary = quiz.run(store.connect(), mock.chain(bank, ["fx-deep"]), None, None, quiz.Settings(), kind="mock", stop_at=0.0)
    assert summary.out_of_time and summary.complete and summary.results == []
    for lang, words in (("en", "Time's up: the 20-minute interview is over"), ("zh", "时间到：20 分钟的面试结束")):
        console = Console(file=StringIO(), width=200)
        QuizView(console, lang, False).summary(summary, None, 20)
        assert words in console.file.getvalue()


def test_pitch_shows_reference_under_a_60s_timer(drill_home):
    result = CliRunner().invoke(app, ["mock", "--pitch", "fx-more", "--bank", str(FIXTURE), "--lang", "en"], input="queries attend with softmax\n\n4\n")
    assert result.exit_code == 0, result.output
    assert "60s" in result.stdout and "reference answer" in result.stdout
    assert "✔ Queries, keys and values." in result.stdout and "✔ Softmax weights." in result.stdout
    conn = sqlite3.connect(drill_home / "drill.db")
    assert conn.execute("SELECT a.question_id, a.rating, a.time_limit, s.kind FROM attempts a JOIN sessions s ON s.id = a.session_id").fetchall() == [
        ("fx-pitch", 4, 60.0, "pitch")
    ]
