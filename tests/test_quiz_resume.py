"""`drill quiz --resume`: an interrupted quiz goes on with its remaining questions, the interrupted one first."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.cli import app
from test_quiz_terminal import FIXTURE, QUIZ, Term, answer, rows

runner = CliRunner()
LINES = {"fx-choice": "b\n", "fx-numeric": "7 GiB\n", "fx-open": "the variance grows\n\n3\n"}


def asked(home: Path, session: int) -> list[str]:
    return [qid for (qid,) in rows(home, f"SELECT question_id FROM attempts WHERE session_id = {session} ORDER BY id")]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_ctrl_c_says_how_to_resume_and_resume_asks_the_rest_interrupted_one_first(drill_home):
    term = Term([*QUIZ, "--count", "3"], drill_home)
    first = term.next_question()
    answer(term, first)
    shown = term.next_question()  # on screen when Ctrl-C comes: never answered
    term.child.sendintr()
    term.expect(r"Go on with the 2 questions left: drill quiz --resume")
    assert term.finish() == 130

    term = Term(["-m", "drill", "quiz", "--resume", "--bank", FIXTURE, "--lang", "en"], drill_home)
    assert term.next_question() == shown  # the interrupted question comes back first
    answer(term, shown)
    last = term.next_question()
    assert last not in (first, shown)
    answer(term, last)
    term.expect(r"2/2 answered")
    assert term.finish() == 0
    assert asked(drill_home, 1) == [first] and asked(drill_home, 2) == [shown, last]
    assert rows(drill_home, "SELECT kind, status FROM sessions ORDER BY id") == [("quiz", "incomplete"), ("quiz", "complete")]

    result = runner.invoke(app, ["quiz", "--resume", "--bank", FIXTURE])  # the quiz is finished now
    assert result.exit_code == 2
    assert "nothing to resume" in result.output


def test_resume_keeps_the_interrupted_quizs_settings_and_says_so_in_json(drill_home):
    result = runner.invoke(app, [*QUIZ[2:], "--count", "3", "--time", "7", "--json"], input="x\n")  # stdin ends after one answer
    assert result.exit_code == 1  # ended early
    summary = json.loads(result.stdout)
    assert (summary["remaining"], summary["resume"]) == (2, "drill quiz --resume")
    done = summary["results"][0]["id"]
    order = [qid for (qid,) in rows(drill_home, "SELECT question_id FROM session_questions WHERE session_id = 1 AND position > 1 ORDER BY position")]

    result = runner.invoke(app, ["quiz", "--resume", "--bank", FIXTURE, "--json"], input="".join(LINES[qid] for qid in order))
    summary = json.loads(result.stdout)
    assert summary["status"] == "complete" and summary["remaining"] == 0 and summary["resume"] is None
    resumed = [r["id"] for r in summary["results"]]
    assert sorted([done, *resumed]) == ["fx-choice", "fx-numeric", "fx-open"]
    assert {r["time_limit"] for r in summary["results"]} == {7}  # --time of the quiz it resumes
    options = json.loads(sqlite3.connect(Path(drill_home) / "drill.db").execute("SELECT options FROM sessions WHERE id = 2").fetchone()[0])
    assert options["resumes"] == 1


def test_a_question_interrupted_while_shown_comes_first_in_the_next_fresh_quiz(drill_home):
    first = runner.invoke(app, [*QUIZ[2:], "--count", "3", "--json"], input="")  # the first question is shown, then stdin ends
    shown = json.loads(first.stdout)
    assert shown["answered"] == 0
    db = sqlite3.connect(Path(drill_home) / "drill.db")
    ((interrupted,),) = db.execute("SELECT question_id FROM session_questions WHERE shown = 1").fetchall()
    for seed in ("2", "3", "4"):  # whatever the seed would draw, it comes first
        fresh = runner.invoke(app, [*QUIZ[2:-4], "--seed", seed, "--count", "1", "--lang", "en", "--json"], input="")
        assert json.loads(fresh.stdout)["answered"] == 0
        assert db.execute("SELECT question_id FROM session_questions ORDER BY session_id DESC, position LIMIT 1").fetchone() == (interrupted,)


def test_resume_with_questions_missing_from_the_banks_names_the_bank_option(drill_home):
    runner.invoke(app, [*QUIZ[2:], "--count", "2"], input="")
    result = runner.invoke(app, ["quiz", "--resume", "--lang", "zh"])  # the fixture bank is not loaded
    assert result.exit_code == 2
    assert "错误：" in result.output and "--bank" in result.output and "Traceback" not in result.output


def test_resume_refuses_to_mix_with_id_or_wrong(drill_home):
    result = runner.invoke(app, ["quiz", "--resume", "--wrong", "--bank", FIXTURE])
    assert result.exit_code == 2 and "one at a time" in result.output
