"""``drill grade`` end to end: exit codes, the JSON contract, the rich report, a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from drill.cli import app
from whiteboard_impls import IMPLS, mutant

runner = CliRunner()
CORRECT = str(IMPLS / "correct" / "sdpa_matmul.py")
BROKEN = str(mutant("mask-inverted__1.py"))


@pytest.mark.usefixtures("warm_judge")
def test_correct_file_passes_with_json():
    result = runner.invoke(app, ["grade", CORRECT, "--json", "--seed", "3"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["task"] == "sdpa" and data["device"] == "cpu" and data["passed"] is True
    assert data["diagnosis"] == [] and data["duration_s"] > 0
    assert {"id", "category", "status", "message", "message_zh", "evidence"} == set(data["checks"][0])


@pytest.mark.usefixtures("warm_judge")
def test_broken_file_fails_with_diagnosis_panel():
    result = runner.invoke(app, ["grade", BROKEN])
    assert result.exit_code == 1
    assert "mask-inverted" in result.stdout and "diagnosis" in result.stdout and "FAILED" in result.stdout


@pytest.mark.usefixtures("warm_judge")
def test_diagnosis_in_chinese():
    result = runner.invoke(app, ["grade", BROKEN, "--lang", "zh"])
    assert result.exit_code == 1
    assert "掩码用反了" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grade", "no_such_file.py"], "no such file"),
        (["grade", CORRECT, "--task", "no-such-task"], "unknown task 'no-such-task'"),
        (["grade", CORRECT, "--device", "tpu"], "unknown device"),
    ],
)
def test_cannot_start_exits_2(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output


def test_cuda_without_cuda_exits_2_and_names_the_build():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    result = runner.invoke(app, ["grade", CORRECT, "--device", "cuda"])
    assert result.exit_code == 2
    assert torch.__version__ in result.output


def test_real_subprocess_and_no_torch_in_the_cli_process():
    probe = "import sys, drill.cli, drill.grade, drill.views.grade_view; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", probe], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "drill", "grade", BROKEN, "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert "mask-inverted" in [d["code"] for d in json.loads(done.stdout)["diagnosis"]]


@pytest.mark.usefixtures("warm_judge")
def test_a_file_not_named_py_is_graded(tmp_path):
    path = tmp_path / "attn.txt"
    path.write_text((IMPLS / "correct" / "sdpa_matmul.py").read_text())
    result = runner.invoke(app, ["grade", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["task"] == "sdpa"

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_a_kernel_failing_under_bench_exits_1(tmp_path):
    path = tmp_path / "small_only.py"
    source = (IMPLS / "correct" / "sdpa_matmul.py").read_text()
    path.write_text(source + "\n\n_graded = scaled_dot_product_attention\n\n\n"
                    "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                    "    if q.shape[-2] > 100:\n        raise MemoryError('too long')\n"
                    "    return _graded(q, k, v, mask)\n")  # fmt: skip
    result = runner.invoke(app, ["grade", str(path), "--device", "cpu", "--bench", "--bench-max-t", "256"])
    assert result.exit_code == 1, result.output
    assert "yours failed at T=256" in result.output


def test_a_file_may_import_a_module_beside_it_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "my_attention.py").write_text((IMPLS / "correct" / "sdpa_matmul.py").read_text())
    (tmp_path / "graded.py").write_text("from my_attention import scaled_dot_product_attention  # noqa: F401\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["grade", "graded.py", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output


@pytest.mark.usefixtures("warm_judge")
def test_a_fresh_seed_at_every_grade_printed_and_reproduced_by_seed():
    first = json.loads(runner.invoke(app, ["grade", BROKEN, "--json"]).stdout)
    again = json.loads(runner.invoke(app, ["grade", BROKEN, "--json", "--seed", str(first["seed"])]).stdout)
    assert again["seed"] == first["seed"]
    assert [(c["id"], c["status"], c["message"]) for c in again["checks"]] == [(c["id"], c["status"], c["message"]) for c in first["checks"]]
    text = runner.invoke(app, ["grade", BROKEN]).stdout
    seed = int(text.rsplit("seed ", 1)[1].split(")")[0])
    assert seed != first["seed"]  # a collision has odds of one in a million


def test_progress_in_a_terminal_speaks_the_language_and_a_pipe_gets_no_stray_line(tmp_path):
    """In a terminal the transient progress line is in --lang's language; piped, stderr holds only the error."""
    import os

    import pexpect

    env = {**os.environ, "DRILL_HOME": str(tmp_path), "TERM": "xterm", "COLUMNS": "120"}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "grade", CORRECT, "--lang", "zh", "--seed", "1"], env=env,
                          encoding="utf-8", timeout=120, dimensions=(40, 120))  # fmt: skip
    child.expect("正在启动评分器")
    child.expect("通过")
    child.expect(pexpect.EOF)
    assert "starting the grader" not in child.before
    missing = subprocess.run([sys.executable, "-m", "drill", "grade", str(tmp_path / "none.py")], capture_output=True, text=True,
                             env={**env, "LANG": "C.UTF-8"}, timeout=60)  # fmt: skip
    assert missing.returncode == 2 and missing.stderr == f"error: {tmp_path / 'none.py'}: no such file\n"
