"""Did-you-mean on every name the user types, and shell completion of those names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from drill.cli import app
from drill.text.suggest import closest

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("typed", "names", "meant"),
    [
        ("mask", ["masks", "tasks", "position"], "masks"),  # a prefix wins over a closer edit distance
        ("postion", ["masks", "position"], "position"),
        ("dailygoal", ["lang", "daily-goal"], "daily-goal"),
        ("kvcache", ["kv_cache", "causal"], "kv_cache"),
        ("zzzz", ["masks", "position"], None),
    ],
)
def test_closest(typed, names, meant):
    assert closest(typed, names) == meant


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["quiz", "--topic", "mask"], "no topic 'mask'; did you mean masks?"),
        (["mock", "postion"], "no topic 'postion'; did you mean position?"),
        (["bank", "list", "--topic", "multihead"], "did you mean multi-head?"),
        (["bank", "show", "attn-why-sqrt"], "did you mean attn-why-sqrt-dk?"),
        (["config", "set", "dailygoal", "3"], "did you mean daily-goal?"),
        (["whiteboard", "sdp"], "did you mean sdpa?"),
    ],
)
def test_unknown_names_get_one_line_with_a_suggestion(argv, message):
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_help_of_quiz_lists_the_topics():
    result = runner.invoke(app, ["quiz", "--help"], terminal_width=200)
    assert "attention-core" in result.output and "masks" in result.output


def complete(words: str) -> list[str]:
    env = {**os.environ, "_DRILL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    script = Path(sys.executable).parent / "drill"  # the installed entry point: completion keys on its name
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    return done.stdout.split()


def test_shell_completion_of_topics_tasks_ids_and_keys():
    assert complete("drill quiz --topic mas") == ["masks"]
    assert "gqa" in complete("drill whiteboard g")
    assert "attn-why-sqrt-dk" in complete("drill bank show attn-why")
    assert complete("drill config set da") == ["daily-goal", "day-start-hour"]


def test_completion_script_is_offered():
    result = runner.invoke(app, ["--show-completion", "bash"])
    assert result.exit_code == 0
    assert "_DRILL_COMPLETE" in result.output


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_did_you_mean_in_a_real_terminal(drill_home):
    env = {**os.environ, "DRILL_HOME": str(drill_home), "LANG": "en_US.UTF-8", "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "quiz", "--topic", "mask"], env=env, encoding="utf-8", timeout=20, cwd=str(ROOT))
    child.expect("did you mean masks")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
