"""``drill selftest``: bundled solutions pass, bundled mutants get exactly their code, and a
disagreement (a wrong expectation) is reported with exit 1. Every task's mutants are already
graded by test_grade_battery.py; here one task runs end to end, the full matrix only as slow."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from drill.cli import app
from drill.grade import selftest
from whiteboard_impls import TASKS_DIR, mutant

runner = CliRunner()


def test_selftest_one_task_json():
    result = runner.invoke(app, ["selftest", "--task", "sdpa", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    mutants = sorted(p.name for p in (TASKS_DIR / "sdpa" / "mutants").glob("*.py"))
    assert data["device"] == "cpu" and data["passed"] is True
    assert [r["file"] for r in data["rows"]] == ["solution.py", *(f"mutants/{m}" for m in mutants)]
    assert data["mutants"] == {"named": len(mutants), "total": len(mutants)}
    scale = next(r for r in data["rows"] if r["file"] == "mutants/scale-missing__1.py")
    assert scale["codes"] == ["scale-missing"] and scale["passed"] is False and scale["ok"] is True


@pytest.fixture
def misfiled_tasks(tmp_path, monkeypatch):
    """A task folder whose 'solution' is broken and whose mutant is filed under the wrong code."""
    folder = tmp_path / "sdpa"
    (folder / "mutants").mkdir(parents=True)
    shutil.copy(mutant("mask-inverted__1.py"), folder / "solution.py")
    shutil.copy(mutant("scale-missing__1.py"), folder / "mutants" / "scale-by-d__1.py")
    shutil.copy(mutant("k-v-swapped__1.py"), folder / "mutants" / "k-v-swapped__1.py")
    monkeypatch.setattr(selftest, "TASKS_DIR", tmp_path)
    return folder


def test_wrong_expectations_are_reported(misfiled_tasks):
    result = runner.invoke(app, ["selftest", "--task", "sdpa", "--json"])
    assert result.exit_code == 1, result.output
    rows = {r["file"]: r for r in json.loads(result.stdout)["rows"]}
    assert rows["solution.py"]["ok"] is False and rows["solution.py"]["codes"] == ["mask-inverted"]
    wrong = rows["mutants/scale-by-d__1.py"]
    assert wrong["ok"] is False and wrong["expected"] == "scale-by-d" and wrong["codes"] == ["scale-missing"]
    assert rows["mutants/k-v-swapped__1.py"]["ok"] is True


def test_disagreement_in_the_matrix_in_chinese(misfiled_tasks):
    result = runner.invoke(app, ["selftest", "--task", "sdpa", "--lang", "zh"])
    assert result.exit_code == 1
    assert "自检失败" in result.stdout and "✗" in result.stdout and "scale-missing" in result.stdout


def test_extra_code_is_a_disagreement():
    row = selftest.Row(selftest.Case("sdpa", TASKS_DIR / "sdpa" / "mutants" / "scale-missing__1.py", "scale-missing"),
                       passed=False, codes=["scale-missing", "unstable-softmax"])  # fmt: skip
    assert not row.ok


@pytest.mark.parametrize(("args", "message"), [(["--task", "sdpaa"], "did you mean sdpa"), (["--device", "tpu"], "unknown device")])
def test_bad_options_exit_2(args, message):
    result = runner.invoke(app, ["selftest", *args])
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.slow
def test_full_selftest_on_cpu():
    result = runner.invoke(app, ["selftest", "--device", "cpu", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0, [r for r in data["rows"] if not r["ok"]]


def test_cuda_without_cuda_exits_2():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    result = runner.invoke(app, ["selftest", "--task", "sdpa", "--device", "cuda"])
    assert result.exit_code == 2 and "CUDA is not available" in result.output
