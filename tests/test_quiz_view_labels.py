"""Question headers and summaries in the user's language; code spans in choices shown as code."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from drill.bank.load import load_paths
from drill.cli import app
from drill.practice.quiz import Summary
from drill.views.quiz_view import QuizView

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"


def view(lang: str) -> tuple[QuizView, io.StringIO]:
    buffer = io.StringIO()
    return QuizView(Console(file=buffer, width=100, color_system=None), lang, interactive=True), buffer


def test_the_header_names_the_question_type_in_chinese():
    q = load_paths([FIXTURE]).questions["fx-numeric"]
    zh, shown = view("zh")
    zh.question(1, 1, q, 30)
    assert "L1 · fx-quiz · 数值" in shown.getvalue() and "numeric" not in shown.getvalue()
    en, shown = view("en")
    en.question(1, 1, q, 30)
    assert "L1 · fx-quiz · numeric" in shown.getvalue()


def test_a_code_span_in_a_choice_loses_its_backticks(tmp_path):
    bank = tmp_path / "b.yaml"
    bank.write_text(FIXTURE.read_text(encoding="utf-8").replace("ReLU", "`key_padding_mask` to ReLU"), encoding="utf-8")
    q = load_paths([bank]).questions["fx-choice"]
    en, shown = view("en")
    en.question(1, 1, q, 30)
    assert "A. key_padding_mask to ReLU" in shown.getvalue() and "`" not in shown.getvalue()


def test_stopping_before_the_first_answer_prints_no_empty_table():
    zh, shown = view("zh")
    zh.summary(Summary(session_id=1, kind="quiz", total=3, stopped="interrupt"))
    assert shown.getvalue().strip().splitlines() == ["在第一题作答前就结束了：没有需要保存的作答。", "继续剩下的 3 题：drill quiz --resume"]
    mock, shown = view("en")
    mock.summary(Summary(session_id=1, kind="mock", total=3, stopped="interrupt"))
    assert "--resume" not in shown.getvalue()  # only a quiz resumes


def test_the_summary_title_names_the_session_kind_in_chinese(drill_home):
    args = ["quiz", "--bank", str(FIXTURE), "--topic", "fx-quiz", "--type", "choice", "--count", "1", "--lang", "zh"]
    result = CliRunner().invoke(app, args, input="b\n")
    assert "测验 · 1/1 已答" in result.output
