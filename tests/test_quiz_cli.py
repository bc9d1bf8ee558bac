"""`drill quiz` and `drill config` run for real, with answers piped on stdin."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from drill.practice import quiz
from drill.bank.load import load_bank
from drill.cli import app

FIXTURE = str(Path(__file__).parent / "fixtures" / "quiz_bank.yaml")
QUIZ = ["quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--count", "3", "--seed", "1", "--lang", "en"]


def quiz_order() -> list[str]:
    """The order --seed 1 gives on an empty history (selection itself is tested in test_quiz_select)."""
    candidates = load_bank([Path(FIXTURE)]).select(topics=["fx-quiz"])
    return [q.id for q in quiz.select(candidates, {}, {}, 3, seed=1)]


def test_scripted_quiz_through_stdin(drill_home):
    lines = {"fx-choice": "b\n", "fx-numeric": "7 GiB\n", "fx-open": "the variance grows\nwith d_k\n\n3\n"}
    result = CliRunner().invoke(app, QUIZ, input="".join(lines[qid] for qid in quiz_order()))
    assert result.exit_code == 0, result.output  # a completed quiz, one answer wrong: not a failure of the command
    out = result.stdout
    assert "\x1b" not in out
    assert "✔ right  answer: B. Softmax" in out and "✘ wrong  answer: 4 ± 0.3 GiB" in out
    assert "✔ Dot-product variance grows with d_k." in out and "· Large logits saturate" in out
    assert "score 2/3  L1 2/3" in out and "3/3 answered" in out
    conn = sqlite3.connect(drill_home / "drill.db")
    rows = conn.execute("SELECT question_id, answer, correct, rating, timed_out FROM attempts ORDER BY id").fetchall()
    assert sorted(rows) == [("fx-choice", "b", 1, 3, 0), ("fx-numeric", "7 GiB", 0, 1, 0), ("fx-open", "the variance grows\nwith d_k", None, 3, 0)]
    assert conn.execute("SELECT status FROM sessions").fetchall() == [("complete",)]


def test_chinese_quiz_speaks_chinese_throughout(drill_home):
    lines = {"fx-choice": "b\n", "fx-numeric": "7 GiB\n", "fx-open": "方差随 d_k 增长\n\n3\n"}
    args = [a if a != "en" else "zh" for a in QUIZ]
    out = CliRunner().invoke(app, args, input="".join(lines[qid] for qid in quiz_order())).stdout
    assert "✔ 正确" in out and "✘ 错误" in out and "得分 2/3" in out and "参考答案" in out and "要点" in out
    for english in ("score", "right", "wrong", "Key points", "reference answer", "Answer:"):
        assert english not in out, english


def test_fail_under_sets_the_exit_code_from_the_score(drill_home):
    lines = {"fx-choice": "b\n", "fx-numeric": "7 GiB\n", "fx-open": "the variance grows\n\n3\n"}  # 2 of 3 right
    script = "".join(lines[qid] for qid in quiz_order())
    for under, code in ((70, 1), (60, 0)):  # 66.7% scored; each run on an empty history, so the order is quiz_order()
        env = {"DRILL_HOME": str(drill_home / f"run{under}")}
        assert CliRunner().invoke(app, [*QUIZ, "--fail-under", str(under)], input=script, env=env).exit_code == code
    assert CliRunner().invoke(app, [*QUIZ, "--fail-under", "101"]).exit_code == 2


def test_an_open_answer_shows_each_ratings_next_interval_before_rating(drill_home):
    args = ["quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--type", "open", "--count", "1", "--lang", "en"]
    out = " ".join(CliRunner().invoke(app, args, input="the variance grows\n\n3\n").stdout.split())
    # a new card under FSRS's default learning steps (1 min, 10 min; Hard is their mean) and its first Easy interval
    assert "1 Again 1m · 2 Hard 6m · 3 Good 10m · 4 Easy 8d" in out, out
    zh_run = CliRunner().invoke(app, [*args[:-1], "zh"], input="方差\n\n3\n", env={"DRILL_HOME": str(drill_home / "zh"), "COLUMNS": "200"})
    zh = " ".join(zh_run.stdout.split())  # 200 columns: Chinese may wrap between any two characters
    assert "1 重来 1 分钟 · 2 困难 6 分钟 · 3 良好 10 分钟 · 4 简单 8 天" in zh, zh


def _env(home: Path) -> dict:
    return {**os.environ, "DRILL_HOME": str(home), "LANG": "en_US.UTF-8"}


def test_json_summary_on_stdout(drill_home):
    runner = CliRunner()
    result = runner.invoke(app, [*QUIZ[:-2], "--type", "choice", "--json", "--lang", "en"], input="c\n")
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["status"] == "complete" and summary["answered"] == 1 and summary["passed"] == 0
    assert summary["results"][0] | {"seconds": 0} == {
        "id": "fx-choice", "level": "L1", "topic": "fx-quiz", "type": "choice", "answer": "c", "correct": False, "unreadable": False,
        "rating": 1, "rating_name": "Again", "seconds": 0, "time_limit": 30, "over_time": False, "cut_off": False,
        "prompt": "Which function turns attention scores into weights?", "choices": ["ReLU", "Softmax", "Tanh"],
        "expected": ["B. Softmax"], "reference": "Softmax over the keys.",
    }  # fmt: skip
    assert "Which function" in result.stderr  # the questions go to stderr so stdout is pure JSON


def test_stdin_ending_early_saves_what_was_answered(drill_home):
    result = CliRunner().invoke(app, [*QUIZ, "--type", "choice,numeric", "--json"], input="b\n")
    summary = json.loads(result.stdout)
    assert result.exit_code == 1 and summary["status"] == "incomplete" and summary["answered"] == 1
    conn = sqlite3.connect(drill_home / "drill.db")
    assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 1
    assert conn.execute("SELECT status FROM sessions").fetchone()[0] == "incomplete"


def test_bad_rating_line_is_a_clear_error(drill_home):
    result = CliRunner().invoke(app, [*QUIZ, "--type", "open"], input="an answer\n\nnine\n")
    assert result.exit_code == 2
    assert "expected a self-rating 1-4" in result.stderr and "Traceback" not in result.output


def test_usage_errors(drill_home):
    runner = CliRunner()
    for args, message in [
        (["--level", "L4"], "'L4' is not one of L1, L2, L3"),
        (["--type", "essay"], "'essay' is not one of"),
        (["--reveal", "never"], "'never' is not one of each, end"),
        (["--topic", "no-such-topic"], "no topic 'no-such-topic'"),
        (["--topic", "fx-quiz", "--level", "L3"], "no questions match"),
    ]:
        result = runner.invoke(app, ["quiz", "--bank", FIXTURE, *args])
        assert result.exit_code == 2, args
        assert message in result.stderr and "Traceback" not in result.output


def test_quiz_refuses_a_foreign_database_file(drill_home):
    db = drill_home / "drill.db"
    db.write_text("not a database\n")
    result = CliRunner().invoke(app, QUIZ, input="b\n")
    assert result.exit_code == 2 and "not a drill database" in result.stderr
    assert db.read_text() == "not a database\n"


def test_config_set_get_and_lang_default(drill_home):
    runner = CliRunner()
    assert runner.invoke(app, ["config", "get", "lang"]).stdout.strip() == "en"  # from LANG=en_US
    assert runner.invoke(app, ["config", "set", "lang", "zh"]).exit_code == 0
    assert runner.invoke(app, ["config", "get", "lang"]).stdout.strip() == "zh"
    result = runner.invoke(app, ["quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--type", "choice"], input="b\n")
    assert "哪个函数" in result.stdout  # quiz content follows the configured language
    assert runner.invoke(app, ["config", "set", "daily-goal", "12"]).stdout.strip() == "daily-goal = 12"
    assert runner.invoke(app, ["config", "get", "day-start-hour"]).stdout.strip() == "4"
    for args, message in [(["set", "lang", "fr"], "must be one of en, zh"), (["set", "day-start-hour", "24"], "between 0 and 23"), (["get", "colour"], "unknown config key")]:
        result = runner.invoke(app, ["config", *args, "--lang", "en"])  # lang is zh now: its errors too, but for --lang
        assert result.exit_code == 2 and message in result.stderr


def test_quiz_does_not_import_torch_or_prompt_toolkit(drill_home):
    code = (
        "import sys; from typer.testing import CliRunner; from drill.cli import app; "
        f"r = CliRunner().invoke(app, {QUIZ!r}, input='b\\n'); "
        "assert 'Which function' in r.stdout or '1G fp32' in r.stdout or 'sqrt' in r.stdout, r.output; "
        "print(sorted(m for m in ('torch', 'prompt_toolkit') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_env(drill_home))
    assert proc.stdout.strip() == "[]", proc.stderr


def test_smoke_bundled_bank(drill_home):
    result = CliRunner().invoke(app, ["quiz", "--count", "2", "--json"], input="")
    assert result.exit_code == 1 and json.loads(result.stdout)["status"] == "incomplete"
