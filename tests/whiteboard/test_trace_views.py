"""The leak picture and the line in the whiteboard's compact report, as a user sees them."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from drill.cli import app
from drill.grade.report import Report
from drill.views import grade_view
from drill.whiteboard import catalog

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SOLUTION = catalog.get("sdpa").solution.read_text()
MASK_IGNORED = SOLUTION.replace('        scores = scores.masked_fill(', '        scores.masked_fill(')
AFTER_SOFTMAX = SOLUTION.replace(
    '    if mask is not None:\n        scores = scores.masked_fill(~mask, float("-inf"))\n    return torch.softmax(scores, dim=-1) @ v',
    '    weights = torch.softmax(scores, dim=-1)\n    if mask is not None:\n        weights = weights.masked_fill(~mask, 0.0)\n    return weights @ v')


@pytest.fixture(scope="module")
def leaky_report(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("home")
    path = home / "leaky.py"
    path.write_text(MASK_IGNORED)
    old = os.environ.get("DRILL_HOME")
    os.environ["DRILL_HOME"] = str(home)
    try:
        result = CliRunner().invoke(app, ["grade", str(path), "--json"])
    finally:
        os.environ.pop("DRILL_HOME") if old is None else os.environ.__setitem__("DRILL_HOME", old)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def render(report: dict, monkeypatch, **console) -> list[str]:
    buffer = io.StringIO()
    monkeypatch.setattr(grade_view, "out", Console(file=buffer, width=80, highlight=False, **console))
    grade_view.print_report(Report.from_wire(report), as_json=False)
    return buffer.getvalue().splitlines()


def picture(lines: list[str], title: str) -> list[str]:
    plain = [ANSI.sub("", line) for line in lines]
    start = next(i for i, line in enumerate(plain) if line.startswith(title))
    return lines[start : start + 11]  # title, key numbers, 8 query rows, legend


def test_the_causal_leak_is_drawn_with_its_legend(leaky_report):
    leak = next(p for p in leaky_report["pictures"] if p["kind"] == "leak" and p["title"].startswith("causal"))
    allowed, through = leak["allowed"], leak["through"]
    assert len(allowed) == len(allowed[0]) == 8
    assert all(allowed[i][j] == (j <= i) for i in range(8) for j in range(8))
    assert all(through[i][j] for i in range(8) for j in range(8))  # the mask is ignored: every pair gets through


def test_plain_and_colour_pictures_fit_80_columns_with_the_same_symbols(leaky_report, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    colour = render(leaky_report, monkeypatch, force_terminal=True, color_system="standard")
    plain = render(leaky_report, monkeypatch, force_terminal=False)
    drawn_c, drawn_p = picture(colour, "causal"), picture(plain, "causal")
    assert all(len(line) <= 80 for line in plain) and all(len(ANSI.sub("", line)) <= 80 for line in colour)
    assert not any(ANSI.search(line) for line in plain)
    assert [ANSI.sub("", line) for line in drawn_c] == drawn_p
    row0 = drawn_p[2].split()
    assert row0 == ["q0", "●", "✗", "✗", "✗", "✗", "✗", "✗", "✗"]  # query 0 sees every future key
    assert "✗ LEAK" in drawn_p[-1] and "● allowed" in drawn_p[-1]
    assert "\x1b[1;31m" in drawn_c[2] or "\x1b[31m" in drawn_c[2]  # the leaking cells in red


def test_no_color_keeps_the_symbols_and_drops_the_colour(leaky_report, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    lines = picture(render(leaky_report, monkeypatch, force_terminal=True), "causal")
    assert not any(re.search(r"\x1b\[[0-9;]*3[0-7]m", line) for line in lines)
    assert ANSI.sub("", lines[2]).split()[2] == "✗"


def test_padding_is_drawn_per_sample(leaky_report):
    titles = [p["title"] for p in leaky_report["pictures"] if p["kind"] == "leak"]
    assert [t for t in titles if t.startswith("padding")] == [
        "padding, sample 0 (length 7)", "padding, sample 1 (length 1)", "padding, sample 2 (length 4)"]
    sample1 = next(p for p in leaky_report["pictures"] if p["title"] == "padding, sample 1 (length 1)")
    assert all(row == [True] + [False] * 6 for row in sample1["allowed"])
    assert all(all(row) for row in sample1["through"])


pexpect = pytest.importorskip("pexpect")


def test_whiteboard_compact_report_names_the_line(tmp_path, drill_home):
    target = tmp_path / "x.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "sdpa", "--file", str(target)],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    try:
        child.expect("Template written")
        child.expect("not implemented yet")
        target.write_text(AFTER_SOFTMAX)
        os.utime(target, ns=(time.time_ns(), time.time_ns() + 1_000_000))
        line = AFTER_SOFTMAX.splitlines().index("    weights = torch.softmax(scores, dim=-1)") + 1
        child.expect(rf"line {line}:\S* The mask is applied after the softmax")
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_a_task_without_reference_steps_says_so_instead_of_an_empty_trace():
    from drill.views import trace_view

    for lang, words in (("en", "no trace for this task yet"), ("zh", "暂不支持逐行追踪")):
        shown = trace_view.trace_lines([], lang)
        assert len(shown) == 2 and words in shown[1]


def test_a_value_trace_is_headed_by_values_and_a_tensor_trace_by_shapes():
    from drill.views import trace_view

    tensor_row = {"line": 3, "code": "s = q @ k.T", "op": "matmul", "shape": [2, 5], "dtype": "float64", "match": "scores",
                  "status": "match"}  # fmt: skip
    value_row = {**tensor_row, "op": "best", "shape": "best=(97,97)", "dtype": "tuple[2]", "value": "(97, 97)", "match": "best pair"}
    assert "values they bind" in trace_view.trace_lines([value_row], "en")[0]
    assert "shapes they make" in trace_view.trace_lines([tensor_row], "en")[0]
    assert "赋的值" in trace_view.trace_lines([value_row], "zh")[0]
