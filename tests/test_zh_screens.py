"""`--lang zh` end to end: no English interface text in a Chinese run of grade, whiteboard, review,
stats and streak. The English side of every label table these screens print from is the list of what
must not appear; content that has no translation (check ids, commands) is not UI. The judge's evidence
is rendered from the evidence catalog: its lines must hold no English word either."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.text import i18n
from drill.cli import app
from drill.views import dashboard_view, doctor_view, grade_view, stats_view, whiteboard_view

from whiteboard.zh_text import english_words

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = str(ROOT / "tests" / "fixtures" / "quiz_bank.yaml")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


FUNCTION_WORDS = {"the", "and", "all", "read", "try", "used", "yes", "off", "day"}  # left over between placeholders; not a label


def english(label) -> list[str]:
    """The English of a label (a message is its English text), each variant of one with a singular and a plural."""
    return [text for variant in label for text in english(variant)] if isinstance(label, tuple) else [str(label)]


def english_fragments(*tables) -> set[str]:
    """The literal English pieces of each label: placeholders and markup cut out, commands and symbols dropped."""
    pieces = set()
    for table in tables:
        for value in table.values():
            for text in english(value):
                for piece in re.split(r"\{[^}]*\}|\[[^\]]*\]|[()·:;,.!?…]|drill [a-z -]+|--[a-z-]+", text):
                    piece = piece.strip(" -+/'\"⏰⏱✔✘`")
                    if re.search(r"[A-Za-z]{3}", piece) and piece not in FUNCTION_WORDS:
                        pieces.add(piece)
    return pieces


UI = english_fragments(i18n.LABELS, whiteboard_view.WORDS, grade_view.WORDS, stats_view.WORDS, stats_view.COLUMNS,
                       dashboard_view.TEXT, doctor_view.WORDS, whiteboard_view.TASK_WORDS) | {"PASSED", "FAILED", "pass", "fail", "warn", "checks", "hint"}  # fmt: skip


def english_in(output: str) -> list[str]:
    text = ANSI.sub("", output)
    return sorted(p for p in UI if re.search(rf"(?<![\w./-]){re.escape(p)}(?![\w/-])", text))


def test_the_fragments_would_catch_english():
    assert "Current streak" in UI and "fix" in UI and "Time's up" in UI
    assert english_in("FAILED 6/21 checks · fix: x") and not english_in("未通过 6/21 项检查 · 改法：x")


def test_stats_streak_review_and_doctor_in_chinese(drill_home):
    runner = CliRunner()
    quiz = ["quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--type", "choice", "--count", "1", "--lang", "zh"]
    assert runner.invoke(app, quiz, input="c\n").exit_code == 0
    for args in (["stats", "--lang", "zh"], ["streak", "--lang", "zh"], ["review", "--bank", FIXTURE, "--lang", "zh"],
                 ["doctor", "--lang", "zh", "--bank", FIXTURE]):  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert english_in(result.output) == [], (args, result.output)
    assert "各级别正确率" in runner.invoke(app, ["stats", "--lang", "zh"]).output


def test_tasks_in_chinese(drill_home):
    result = CliRunner().invoke(app, ["tasks", "--lang", "zh"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert english_in(result.output) == [], result.output
    assert all(word in result.output for word in ("白板题", "方向", "级别", "未尝试", "开始一道题")), result.output
    english = CliRunner().invoke(app, ["tasks", "--lang", "en"], env={"COLUMNS": "160"}).output
    assert "Whiteboard tasks" in english and "untried" in english and "白板题" not in english


@pytest.mark.usefixtures("warm_judge")
def test_grade_in_chinese():
    pytest.importorskip("torch")
    mutant = ROOT / "drill" / "grade" / "tasks" / "sdpa" / "mutants" / "scale-missing__1.py"
    result = CliRunner().invoke(app, ["grade", str(mutant), "--task", "sdpa", "--lang", "zh"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    screen = result.stdout
    rows: list[str] = []  # the evidence column; a row wrapped onto more lines has an empty status cell after its first
    for cells in (line.split("│") for line in screen.splitlines()):
        if len(cells) == 6 and (cells[1].strip() or not rows):
            rows.append(cells[4].strip())
        elif len(cells) == 6:
            rows[-1] += " " + cells[4].strip()
    assert "诊断" in screen and "改法" in screen and "未通过" in screen
    assert re.search(r"第 7 行：这一行之后应得到 `scaled`：你的是应为值的 2 倍：没有乘 1/√d", screen), screen
    assert any("最大误差" in row and "允许" in row for row in rows), rows  # the numerical checks' evidence, in Chinese
    assert english_in(screen) == [], screen
    assert [w for row in rows for w in english_words(row)] == [], rows


def test_a_whiteboard_session_in_chinese(tmp_path, drill_home):
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("torch")
    from drill.whiteboard import catalog

    target = tmp_path / "x.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "sdpa", "--file", str(target), "--lang", "zh"],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    seen = []
    try:
        child.expect("还没实现")
        seen.append(child.before)
        target.write_text(catalog.get("sdpa").solution.read_text().replace(" / math.sqrt(q.size(-1))", ""))
        child.expect("scale-missing")
        child.expect("改法")
        seen.append(child.before)
        for key, answer in (("h", "提示 1/3"), ("r", "按 .*y.* 确认"), ("n", "未恢复")):
            child.send(key)
            child.expect(answer)
            seen.append(child.before + child.after)
        child.send("q")
        child.expect(pexpect.EOF)
        seen.append(child.before)
    finally:
        child.close(force=True)
    shown = "".join(seen)
    evidence = [ANSI.sub("", line) for line in shown.splitlines() if re.search(r"^\s*(\x1b\[[0-9;]*m)*\s*[✗!]", line)]
    assert "评为" in shown and "剩余" in shown and evidence
    assert english_in(shown) == [], shown
    assert [w for line in evidence for w in english_words(line.split(": ", 1)[-1])] == [], evidence  # after the check id
    assert "`" not in ANSI.sub("", shown)  # code in a message is shown as code, not in backticks (tests/test_code_spans.py)


def test_an_error_after_the_language_is_known_is_prefixed_in_it(drill_home):
    result = CliRunner().invoke(app, ["quiz", "--bank", FIXTURE, "--topic", "fx-quizz", "--lang", "zh"])
    assert result.exit_code == 2 and result.stderr.startswith("错误：") and "fx-quiz" in result.stderr
    english = CliRunner().invoke(app, ["quiz", "--bank", FIXTURE, "--topic", "fx-quizz", "--lang", "en"])
    assert english.stderr.startswith("error: ")
