"""Issue 29's small things: 60-column toolbars, hanging indents, help naming the optimize extra, bank stats JSON, unwrapped pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from prompt_toolkit.utils import get_cwidth
from typer.testing import CliRunner

from drill.cli import app
from drill.text.i18n import t
from drill.practice.terminal_input import TOOLBAR_COLUMNS, fit_toolbar

runner = CliRunner()
LONG_CHOICE = """\
format_version: 1
questions:
  - id: long-choice
    level: L1
    topic: wrap
    type: choice
    prompt: {en: "Which is right?", zh: "哪个对？"}
    answer: {en: "The first.", zh: "第一个。"}
    choices:
      - {en: "The attention weights are divided by the square root of `d_k` so that softmax does not saturate", zh: "长"}
      - {en: "No", zh: "否"}
    correct: 0
    key_points:
      - {en: "first", zh: "第一", keywords: {en: [a], zh: [甲]}}
      - {en: "second", zh: "第二", keywords: {en: [b], zh: [乙]}}
"""


def drill(*args: str, stdin: str = "", columns: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"COLUMNS": str(columns)} if columns else {})}
    return subprocess.run([sys.executable, "-m", "drill", *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_longest_quiz_and_mock_toolbars_fit_60_columns(lang):
    hints = [t("submit_multiline", lang), t("stop", lang)]
    worst = [  # overtime on a question of a mock whose own clock is still running, and the mock's clock at zero
        [("", f"⏰ 0:00 {t('times_up', lang)} +12:34"), ("", t("mock_left", lang, clock="44:59"))],
        [("", f"⏰ 0:00 {t('times_up', lang)} +12:34"), ("", "⏰ " + t("mock_left", lang, clock="0:00"))],
        [("", f"⏱ 1:59 {t('left', lang)}"), ("", t("mock_left", lang, clock="44:59"))],
    ]
    for clocks in worst:
        shown = "".join(text for _, text in fit_toolbar(clocks, hints))
        assert get_cwidth(shown) <= TOOLBAR_COLUMNS, shown
        assert all(text in shown for _, text in clocks)  # the clocks always show; only hints give way
    plain = "".join(text for _, text in fit_toolbar([("", f"⏱ 0:59 {t('left', lang)}")], hints))
    assert t("submit_multiline", lang) in plain and t("stop", lang) in plain  # room for both hints without the mock clock


def test_a_wrapped_choice_keeps_a_hanging_indent(tmp_path):
    bank = tmp_path / "bank.yaml"
    bank.write_text(LONG_CHOICE, encoding="utf-8")
    out = drill("quiz", "--bank", str(bank), "--id", "long-choice", "--lang", "en", stdin="b\n", columns=44).stdout
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  A. The attention"))
    assert lines[first + 1].startswith("     the square root") and lines[first + 2].startswith("     does not")
    assert "`" not in out  # code spans styled, never shown as backticks, in the choices and the verdict alike
    assert "answer: A. The attention weights are divided by the square root of d_k so that softmax does not saturate" in out


def test_piped_output_is_not_wrapped_mid_sentence(tmp_path):
    out = drill("history", "export", str(tmp_path / "h.json")).stdout
    assert out.count("\n") == 1 and out.rstrip().endswith("0 task reviews")


def test_review_help_names_the_optimize_extra():
    result = runner.invoke(app, ["review", "--help"], env={"COLUMNS": "200"})
    assert "llm-drill[optimize]" in result.output


def test_bank_stats_json_matches_bank_list(tmp_path):
    stats = json.loads(runner.invoke(app, ["bank", "stats", "--json"]).stdout)
    listed = json.loads(runner.invoke(app, ["bank", "list", "--json"]).stdout)
    assert stats["total"] == len(listed) == sum(stats["levels"].values()) == sum(stats["types"].values())
    masks = [q for q in listed if q["topic"] == "masks"]
    assert stats["topics"]["masks"]["total"] == len(masks)
    assert stats["topics"]["masks"]["levels"]["L2"] == sum(q["level"] == "L2" for q in masks)
    both = runner.invoke(app, ["bank", "stats", "--json", "--markdown"])
    assert both.exit_code == 2 and "one at a time" in both.output


def test_mistakes_is_in_the_command_list():
    assert "mistakes" in runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output
