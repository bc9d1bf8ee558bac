"""Bank files written to break the loader: each is one clear line per problem at its real line, never a traceback.

The files are generated here (some are large); the fast path (rapidyaml) and the detailed
one (PyYAML) must agree on what they refuse.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.cli import app

runner = CliRunner()

QUESTION = """\
  - id: {id}
    level: L1
    topic: hostile
    type: {type}
    prompt: {{en: "Why {id}?", zh: "为什么 {id}？"}}
    answer: {{en: "{answer}", zh: "因为如此。"}}
{extra}    key_points:
      - {{en: "first", zh: "第一", keywords: {{en: [alpha], zh: [甲]}}}}
      - {{en: "second", zh: "第二", keywords: {{en: [beta], zh: [乙]}}}}
"""


def bank(*questions: str, head: str = "format_version: 1\n") -> str:
    return head + "questions:\n" + "".join(questions)


def question(qid: str = "q1", type: str = "open", answer: str = "Because.", extra: str = "") -> str:
    return QUESTION.format(id=qid, type=type, answer=answer, extra=extra)


CHOICES = "    choices: [{en: yes, zh: 是}, {en: no, zh: 否}]\n"


def problems(tmp_path: Path, text: str) -> tuple[Path, list[str]]:
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["bank", "list", "--bank", str(path), "--json"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stdout == ""
    return path, [line.removeprefix("error: ") for line in result.stderr.strip().splitlines()]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (bank(question(type="choice", extra=CHOICES + "    correct: " + "9" * 5000 + "\n")), 10, "a number 5000 characters long is too large"),
        (bank(question(type="numeric", extra="    value: " + "9" * 5000 + "\n")), 9, "a number 5000 characters long is too large"),
        (bank(question(extra="    answer: {en: again, zh: 又一次}\n")), 9, "key `answer` given twice in one mapping (lines 8 and 9)"),
        (bank(question()).replace('prompt: {en: "Why', 'prompt: {en: "a", en: "Why'), 7, "key `en` given twice in one mapping (lines 7 and 7)"),
        (bank(question(), head="format_version: 1\nformat_version: 1\n"), 2, "key `format_version` given twice"),
        (bank(question(), head="format_version: true\n"), 1, "`format_version` must be 1 (not true)"),
        (bank(question(), head="format_version: 1.0\n"), 1, "`format_version` must be 1 (not 1.0)"),
        (bank(question(type="numeric", extra="    value: .nan\n")), 9, "`value` must be a finite number, not nan"),
        (bank(question(type="numeric", extra="    value: 8\n    tolerance: .inf\n")), 10, "`tolerance` must be a finite number, not inf"),
        (bank(question(type="numeric", extra="    value: -.inf\n")), 9, "`value` must be a finite number, not -inf"),
    ],
    ids=["bigint-correct", "bigint-value", "dup-answer", "dup-en", "dup-top", "version-true", "version-float", "nan", "inf-tolerance", "inf-value"],
)
def test_refused_with_one_line_at_the_line(tmp_path, text, line, message):
    path, errors = problems(tmp_path, text)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:{line}: ") and message in errors[0], errors[0]


@pytest.mark.parametrize(("char", "name"), [("\x00", "U+0000 (NUL)"), ("\x07", "U+0007 (BEL)"), ("\x7f", "U+007F (DEL)"), ("\x90", "U+0090")])
def test_control_characters_are_reported_at_their_line(tmp_path, char, name):
    path, errors = problems(tmp_path, bank(question("q0"), question(answer=f"bad{char}char")))
    assert errors == [f"{path}:17: control character {name} is not allowed in YAML; delete it"]


@pytest.mark.parametrize("char", ["\x7f", "\x85\x9f"])
def test_control_characters_beside_other_errors_do_not_crash(tmp_path, char):
    """The fast parser reads DEL and C1; the line finder (libyaml) refuses them: they used to meet in a traceback."""
    text = bank(question(answer=f"bad{char}char", extra="    follow_ups: [nowhere]\n"), question("q1"))
    path, errors = problems(tmp_path, text)
    assert errors and all(e.startswith(f"{path}:8: control character U+") for e in errors), errors


def test_a_nel_is_allowed(tmp_path):
    path = tmp_path / "nel.yaml"
    path.write_text(bank(question(answer="line\x85break")), encoding="utf-8")
    assert runner.invoke(app, ["bank", "list", "--bank", str(path), "--json"]).exit_code == 0


def test_deep_nesting_prints_only_drills_line(tmp_path):
    """rapidyaml's C++ core prints its own errors on fd 2: a real process shows whether they leak."""
    path = tmp_path / "deep.yaml"
    path.write_text(bank(question(extra="    tags: " + "[" * 100_000 + "]" * 100_000 + "\n")), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "drill", "bank", "list", "--bank", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {path}:9: YAML syntax error: exceeded maximum nesting depth"]


def test_a_field_spelled_out_at_its_default_still_loads_fast_and_right(tmp_path):
    path = tmp_path / "defaults.yaml"
    path.write_text(bank(question(extra="    tags: []\n    follow_ups: []\n    time_limit: null\n")), encoding="utf-8")
    result = runner.invoke(app, ["bank", "show", "q1", "--bank", str(path), "--lang", "en"])
    assert result.exit_code == 0, result.output
