"""A wrong select-all-that-apply answer names the options missed and the ones chosen wrongly, on screen and in JSON."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from drill.cli import app
from test_quiz_terminal import FIXTURE, Term

runner = CliRunner()
MULTI = ["quiz", "--bank", FIXTURE, "--id", "fx-multi"]  # right: A and C of A-D


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize(("lang", "typed", "said"), [
    ("en", "ab\r", r"missed C · extra B"),
    ("zh", "ａｂｄ\r", r"漏选 C · 多选 B D"),  # full width, as a Chinese input method types it
])  # fmt: skip
def test_the_verdict_in_a_terminal_names_missed_and_extra_options(drill_home, lang, typed, said):
    term = Term(["-m", "drill", *MULTI, "--lang", lang], drill_home)
    term.expect("KV cache")
    term.expect("left" if lang == "en" else "剩余")
    term.child.send(typed)
    term.expect(said)
    assert term.finish() == 0


def run_json(answer: str) -> dict:
    result = runner.invoke(app, [*MULTI, "--json"], input=answer + "\n")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["results"][0]


def test_json_carries_missed_and_extra_letters():
    assert (lambda r: (r["correct"], r["missed"], r["extra"]))(run_json("a")) == (False, ["C"], [])
    assert (lambda r: (r["correct"], r["missed"], r["extra"]))(run_json("A、B、C")) == (False, [], ["B"])
    assert (lambda r: (r["correct"], r["missed"], r["extra"]))(run_json("ca")) == (True, [], [])


def test_an_only_missed_option_is_said_alone_and_a_right_answer_says_neither():
    wrong = runner.invoke(app, [*MULTI, "--lang", "en"], input="c\n").stdout
    assert "missed A" in wrong and "extra" not in wrong
    right = runner.invoke(app, [*MULTI, "--lang", "en"], input="ac\n").stdout
    assert "missed" not in right and "extra" not in right


def test_a_single_answer_choice_keeps_its_plain_verdict():
    out = runner.invoke(app, ["quiz", "--bank", FIXTURE, "--id", "fx-choice", "--lang", "en"], input="a\n").stdout
    assert "✘ wrong  answer: B. Softmax" in out
    assert "missed" not in out
