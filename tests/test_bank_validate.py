"""`drill bank validate` on real malformed files: every problem as file:line: message, exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.cli import app

BAD = Path(__file__).parent / "fixtures" / "bad_banks"
runner = CliRunner()


def marked(path: Path) -> tuple[int, str]:
    """The line carrying the fixture's `# error: <message>` marker, and the message."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        found = re.search(r"# error: (.+)$", line)
        if found:
            return number, found.group(1).strip()
    raise AssertionError(f"{path} has no '# error:' marker")


MARKED = sorted(p for p in BAD.glob("*.yaml") if p.name not in ("empty.yaml", "not_utf8.yaml"))


@pytest.mark.parametrize("path", MARKED, ids=lambda p: p.stem)
def test_each_problem_is_reported_at_its_line(path):
    line, message = marked(path)
    result = runner.invoke(app, ["bank", "validate", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1, errors
    assert f"{path}:{line}:" in errors[0]
    assert message in errors[0]
    assert "Traceback" not in result.output


def test_empty_file():
    result = runner.invoke(app, ["bank", "validate", str(BAD / "empty.yaml")])
    assert result.exit_code == 2
    assert f"{BAD / 'empty.yaml'}:1: file is empty" in result.stderr


def test_file_that_is_not_utf8_names_the_line_of_the_bad_byte():
    result = runner.invoke(app, ["bank", "validate", str(BAD / "not_utf8.yaml")])
    assert result.exit_code == 2
    assert f"{BAD / 'not_utf8.yaml'}:3: file is not UTF-8" in result.stderr


def test_duplicate_ids_across_files_name_both_places():
    result = runner.invoke(app, ["bank", "validate", str(BAD / "dup")])
    assert result.exit_code == 2
    line, _ = marked(BAD / "dup" / "b.yaml")
    first = next(n for n, text in enumerate((BAD / "dup" / "a.yaml").read_text().splitlines(), 1) if "id: shared-id" in text)
    assert f"{BAD / 'dup' / 'b.yaml'}:{line}: duplicate id 'shared-id' (first defined at {BAD / 'dup' / 'a.yaml'}:{first})" in result.stderr


def test_every_problem_in_a_folder_is_reported_at_once():
    result = runner.invoke(app, ["bank", "validate", str(BAD)])
    assert result.exit_code == 2
    reported = {line.split(":", 1)[0] for line in result.stderr.strip().splitlines()}
    expected = {str(p) for p in BAD.glob("*.yaml")} | {str(BAD / "dup" / "b.yaml")}
    assert reported == expected


def test_a_clean_bank_validates(tmp_path):
    result = runner.invoke(app, ["bank", "validate", "questions"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ok: ")


def test_missing_path_is_an_error(tmp_path):
    result = runner.invoke(app, ["bank", "validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "no such file or folder" in result.stderr


@pytest.mark.parametrize(
    "command", [["bank", "list"], ["bank", "stats"], ["quiz", "--count", "1"], ["review"], ["mock"], ["export", "markdown", "out.md"]]
)
def test_every_command_that_loads_a_broken_bank_fails_the_same_way(command):
    path = BAD / "bad_level.yaml"
    line, message = marked(path)
    result = runner.invoke(app, [*command, "--bank", str(path)], input="")
    assert result.exit_code == 2
    assert f"{path}:{line}:" in result.stderr and message in result.stderr
    assert "Traceback" not in result.output


def test_fast_path_decodes_what_the_detailed_path_does():
    """Where the rapidyaml fast path accepts a file, it must equal PyYAML + per-question validation.

    YAML 1.1 (PyYAML) and 1.2 (rapidyaml) disagree on a few plain scalars such as `1e-5`;
    files where they do fall back to the detailed path, so the result is the same either way.
    """
    from drill.bank import load
    from drill.paths import bundled_bank_dir

    files = sorted(bundled_bank_dir().rglob("*.yaml"))
    fast_files = 0
    for path in files:
        problems: list[str] = []
        detailed = load._detailed(load._File(path), problems)
        assert problems == []
        fast = load._fast(path.read_bytes())
        if fast is not None:
            fast_files += 1
            assert fast == detailed, path.name
    assert fast_files == len(files), "quote the scalars YAML 1.1 and 1.2 read differently (e.g. 1e-5)"


def test_every_problem_of_one_question_is_reported(tmp_path):
    """msgspec stops at the first bad field; the validator reports each one, then the rules that need a decoded question."""
    path = tmp_path / "many.yaml"
    path.write_text(
        "format_version: 1\n"
        "topic: fixtures\n"
        "questions:\n"
        "  - id: many-problems\n"
        "    type: choice\n"
        "    level: L9\n"  # line 6: bad level
        "    time_limit: -3\n"  # line 7: bad time limit
        "    prompt: {en: 'Which imaginary zorblax option?', zh: '哪个 zorblax 选项？'}\n"
        "    answer: {en: 'The first.', zh: '第一个。'}\n"
        "    key_points:\n"
        "      - {en: a, zh: a, keywords: {en: [first], zh: [第一]}}\n"
        "      - {en: b, zh: b, keywords: {en: [first], zh: [第一]}}\n"
        "    choices: [{en: a, zh: 甲}, {en: b, zh: 乙}]\n"
        "    correct: [0, 3, 5]\n",  # line 14: two indexes out of range
        encoding="utf-8",
    )
    result = runner.invoke(app, ["bank", "validate", str(path)])
    assert result.exit_code == 2
    errors = result.stderr.strip().splitlines()
    assert [e.split(":")[1] for e in errors] == ["6", "7", "14"], errors
    assert "invalid value 'L9'" in errors[0] and "time_limit" in errors[1]
    assert "`correct` indexes 3, 5 out of range (there are 2 choices, 0 to 1)" in errors[2]
