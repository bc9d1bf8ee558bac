"""A file that cannot parse, or that surely lacks the entry point, is reported from the CLI's own process:
no judge, no zygote, no torch import (drill.grade.precheck)."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from drill.cli import app
from drill.grade import isolation, precheck, run, warm

runner = CliRunner()


@pytest.fixture
def no_judge(monkeypatch):
    """Starting a judge is a failure of the test: the precheck must answer alone."""

    class Refused:
        def __init__(self, *args, **kwargs):
            raise AssertionError("a judge was started")

    monkeypatch.setattr(run, "Worker", Refused)
    monkeypatch.setattr(warm, "Worker", Refused)
    monkeypatch.setattr(isolation, "Worker", Refused)


def write(tmp_path, source: str, name: str = "mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_a_syntax_error_names_the_line_and_points_at_it(tmp_path, no_judge):
    path = write(tmp_path, """\
        import torch

        def scaled_dot_product_attention(q, k, v, mask=None)
            return q
        """)
    result = runner.invoke(app, ["grade", str(path), "--json"])
    assert result.exit_code == 1
    check = json.loads(result.stdout)["checks"][0]
    assert check["id"] == "load.import" and check["status"] == "error"
    head, code, caret = check["message"].split("\n")
    assert head == "syntax error at line 3: expected ':'"
    assert code.strip() == "def scaled_dot_product_attention(q, k, v, mask=None)"
    assert caret.index("^") == len(code)  # just past the closing parenthesis, where the colon is missing
    assert check["message_zh"].startswith("第 3 行有语法错误")


def test_a_syntax_error_is_recorded_as_a_failed_grade(tmp_path, no_judge):
    path = write(tmp_path, "def softmax(x):\n    return x +\n")
    assert runner.invoke(app, ["grade", str(path), "--task", "softmax"]).exit_code == 1
    tasks = json.loads(runner.invoke(app, ["tasks", "--json"]).stdout)
    assert next(t for t in tasks if t["id"] == "softmax")["status"] == "failed"


def test_a_missing_entry_point_names_the_near_miss(tmp_path, no_judge):
    path = write(tmp_path, "class MultiHeadedAttention:\n    pass\n")
    result = runner.invoke(app, ["grade", str(path), "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["checks"][0]["id"] == "load.entry"
    assert "did you mean the mha task's MultiHeadAttention?" in data["checks"][0]["message"]
    assert [d["code"] for d in data["diagnosis"]] == ["not-implemented"]


@pytest.mark.parametrize(
    "source",
    [
        "def _impl(q, k, v, mask=None):\n    return q\nglobals()['scaled_dot_product_attention'] = _impl\n",
        "from helpers import *  # may define scaled_dot_product_attention\n",
        "try:\n    from fast import scaled_dot_product_attention\nexcept ImportError:\n    def scaled_dot_product_attention(q, k, v, mask=None):\n        return q\n",
        "if True:\n    class Wrapper:\n        pass\n    scaled_dot_product_attention = Wrapper\n",
    ],
    ids=["globals", "star-import", "try-import", "assigned-in-a-block"],
)
def test_names_bound_some_other_way_are_left_to_the_judge(tmp_path, source):
    path = write(tmp_path, source)
    assert precheck.precheck(path, None, "cpu") is None
    assert precheck.precheck(path, "sdpa", "cpu") is None


def test_the_whiteboard_grader_answers_a_syntax_error_without_its_judge(tmp_path, monkeypatch):
    started = []

    class Slow:
        def __init__(self, *args, **kwargs):
            started.append(self)

        def grade(self, *args, **kwargs):
            raise AssertionError("the judge graded a file that does not parse")

        def alive(self):
            return True

        def close(self):
            pass

    monkeypatch.setattr(warm, "Worker", Slow)
    path = write(tmp_path, "def softmax(x):\n    return (x\n")
    with warm.WarmGrader() as grader:
        report = grader.grade(run.make_request(path, task="softmax", device="cpu"), 10.0)
    assert not report.passed and report.checks[0].id == "load.import"
    assert "'(' was never closed" in report.checks[0].message
