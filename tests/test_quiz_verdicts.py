"""Verdicts as the user reads them: answers in everyday forms counted right, unreadable ones named, one meaning for Hard."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from drill.practice import quiz
from drill.history import stats, store
from drill.practice.answers import Rating
from drill.bank.load import load_bank
from drill.cli import app
from drill.views.quiz_view import QuizView
from drill.views.console import err

FIXTURES = Path(__file__).parent / "fixtures"
FORMS = str(FIXTURES / "answer_forms.yaml")
FORMS_QUIZ = ["quiz", "--bank", FORMS, "--topic", "fx-forms", "--seed", "3", "--lang", "en"]
TYPED = {"fx-forms-pass-at-k": "29/38", "fx-forms-rm-accuracy": "76.3%", "fx-forms-decode-shape": "（2，8，1，21）", "fx-forms-norm": "Ａ", "fx-forms-heads": "A和C"}


def order(count: int) -> list[str]:
    """The questions --seed 3 gives on an empty history (selection itself is tested in test_quiz_select)."""
    return [q.id for q in quiz.select(load_bank([Path(FORMS)]).select(topics=["fx-forms"]), {}, {}, count, seed=3)]


def flat(printed: str) -> str:
    """Printed text with panel borders and line wrapping taken out."""
    return " ".join(printed.replace("│", " ").split())


def test_answers_typed_as_people_type_them_are_counted_right(drill_home):
    ids = order(5)
    result = CliRunner().invoke(app, [*FORMS_QUIZ, "--count", "5", "--json"], input="".join(f"{TYPED[qid]}\n" for qid in ids))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [(r["id"], r["answer"], r["correct"]) for r in summary["results"]] == [(qid, TYPED[qid], True) for qid in ids]
    assert summary["passed"] == 5
    rows = sqlite3.connect(drill_home / "drill.db").execute("SELECT question_id, answer, correct FROM attempts").fetchall()
    assert sorted(rows) == sorted((qid, TYPED[qid], 1) for qid in ids)


def test_the_terminal_text_has_no_latex_and_the_verdict_lists_options_one_per_line(drill_home):
    ids = order(5)
    out = CliRunner().invoke(app, [*FORMS_QUIZ, "--count", "5"], input="".join(f"{TYPED[qid]}\n" for qid in ids)).stdout
    assert "1 - C(18, 10) / C(20, 10)" in flat(out) and "√(1/d∑_i x_i²)" in flat(out)
    assert "$" not in out and "\\binom" not in out and "\\sqrt" not in out
    assert "(select all that apply)" in out and "choose 2" not in out
    assert "✔ right  (" in out and "answer:\n  A. MQA\n  C. GQA\n" in out  # never "A. MQA, C. GQA" glued on one line
    assert "✔ right  answer: A. RMSNorm" in out  # a single right option stays on the verdict line


def test_an_unreadable_scripted_answer_is_wrong_and_says_unreadable(drill_home):
    args = ["quiz", "--bank", FORMS, "--topic", "fx-forms", "--type", "numeric", "--count", "1", "--lang", "en"]
    result = CliRunner().invoke(app, args, input="about three quarters\n")
    assert result.exit_code == 0  # completed: a wrong (unreadable) answer is not a failure of the command
    assert "✘ unreadable: can't read 'about three quarters' as a number (try 29/38" in result.stdout
    (row,) = [line for line in result.stdout.splitlines() if "fx-forms-" in line]  # the summary table's row
    assert "✘ unreadable" in row
    summary = json.loads(CliRunner().invoke(app, [*args, "--json"], input="3/4 or 4/5\n").stdout)
    assert summary["results"][0]["unreadable"] is True and summary["results"][0]["correct"] is False


def test_a_chinese_unreadable_verdict(drill_home):
    args = ["quiz", "--bank", FORMS, "--topic", "fx-forms", "--type", "shape", "--lang", "zh"]
    out = CliRunner().invoke(app, args, input="不知道\n").stdout
    assert "✘ 无法识别：无法把 '不知道' 识别为形状（可以写 (B, H, T, T) 或 [2, 8, 1, 21]）" in out


def test_gb_against_gib_is_explained(drill_home):
    fixture = str(FIXTURES / "quiz_bank.yaml")
    out = CliRunner().invoke(app, ["quiz", "--bank", fixture, "--topic", "fx-quiz", "--type", "numeric", "--lang", "en"], input="4.29 GB\n").stdout
    assert "✔ right  answer: 4 ± 0.3 GiB" in out
    assert "read 4.29 GB as 3.995 GiB: GB and MB are powers of 10" in out


def test_json_carries_the_whole_question_and_stderr_crops_nothing(drill_home, tmp_path):
    long_prompt = " ".join(f"word{i}" for i in range(120)) + " LASTWORD"
    bank = tmp_path / "long.yaml"
    bank.write_text(json.dumps({"format_version": 1, "questions": [{
        "id": "long-q", "level": "L1", "topic": "fx-long", "type": "choice", "prompt": {"en": long_prompt, "zh": long_prompt},
        "answer": {"en": "ref " * 60 + "REFEND", "zh": "参考"}, "choices": [{"en": "a " * 50 + "CHOICEEND", "zh": "甲"}, {"en": "b", "zh": "乙"}],
        "correct": 0, "key_points": [{"en": "a", "zh": "甲", "keywords": {"en": ["a"], "zh": ["甲"]}},
                                     {"en": "b", "zh": "乙", "keywords": {"en": ["b"], "zh": ["乙"]}}]}]}))  # fmt: skip
    result = CliRunner().invoke(app, ["quiz", "--bank", str(bank), "--topic", "fx-long", "--json", "--lang", "en"], input="b\n")
    shown = flat(result.stderr)
    assert "word119 LASTWORD" in shown and "CHOICEEND" in shown and "REFEND" in shown
    row = json.loads(result.stdout)["results"][0]
    assert row["prompt"] == long_prompt and row["choices"][0].endswith("CHOICEEND") and row["reference"].endswith("REFEND")
    assert row["expected"] == ["A. " + "a " * 50 + "CHOICEEND"]


def test_reveal_end_prints_each_verdict_under_its_own_question(drill_home):
    fixture = str(FIXTURES / "quiz_bank.yaml")
    args = ["quiz", "--bank", fixture, "--topic", "fx-quiz", "--count", "3", "--seed", "1", "--lang", "en", "--reveal", "end"]
    ids = [q.id for q in quiz.select(load_bank([Path(fixture)]).select(topics=["fx-quiz"]), {}, {}, 3, seed=1)]
    answers = {"fx-choice": "b\n", "fx-numeric": "7 GiB\n", "fx-open": "the variance grows\n\n"}
    out = CliRunner().invoke(app, args, input="".join(answers[qid] for qid in ids) + "3\n").stdout  # the rating comes at the end
    verdicts = {"fx-choice": "✔ right  answer: B. Softmax", "fx-numeric": "✘ wrong  answer: 4 ± 0.3 GiB", "fx-open": "Key points"}
    recaps = [out.index(f"{n}/3  {qid}") for n, qid in enumerate(ids, 1)]
    assert out.index("3/3  L1") < recaps[0] and recaps == sorted(recaps)  # the recaps follow the last question
    for n, qid in enumerate(ids):
        end = recaps[n + 1] if n + 1 < len(ids) else len(out)
        assert recaps[n] < out.index(verdicts[qid], recaps[n]) < end, qid


class _Scripted:
    """Answers every question right but over its time limit, and rates open answers Hard."""

    def answer(self, q, limit, strict):
        return quiz.Reply({"choice": "b", "numeric": "4", "open": "the variance grows"}[q.type], seconds=limit + 5)

    def rating(self, buttons=""):
        return Rating.HARD


class _Silent(QuizView):
    def __init__(self):
        super().__init__(err, "en", False)

    def question(self, *args):
        pass

    def feedback(self, result):
        pass


def test_hard_counts_the_same_in_the_quiz_score_and_in_stats(drill_home):
    """Right but over time (Hard) counts as right; an open answer rated Hard counts in neither place."""
    conn = store.connect()
    questions = load_bank([FIXTURES / "quiz_bank.yaml"]).select(topics=["fx-quiz"])
    summary = quiz.run(conn, questions, _Scripted(), _Silent(), quiz.Settings())
    assert [r.rating for r in summary.results] == [Rating.HARD] * 3
    passed = {r.question.type: r.passed for r in summary.results}
    assert passed == {"choice": True, "numeric": True, "open": False}
    collected = stats.collect(conn)
    assert (collected.correct, collected.attempts) == (sum(passed.values()), 3)


def test_the_chinese_streak_line_after_a_quiz_has_no_gap(drill_home):
    runner = CliRunner()
    assert runner.invoke(app, ["config", "set", "daily-goal", "1"]).exit_code == 0
    args = ["quiz", "--bank", FORMS, "--topic", "fx-forms", "--type", "shape", "--lang", "zh"]
    out = runner.invoke(app, args, input="（2，8，1，21）\n").stdout
    assert "今日目标已完成" in out and "今日 目标" not in out


def test_a_chinese_verdict_uses_chinese_punctuation(drill_home):
    args = ["quiz", "--bank", FORMS, "--topic", "fx-forms", "--type", "shape", "--lang", "zh"]
    out = CliRunner().invoke(app, args, input="[2, 8, 21, 1]\n").stdout
    assert "✘ 错误  答案：[2, 8, 1, 21]" in out
