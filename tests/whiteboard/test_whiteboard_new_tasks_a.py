"""drill whiteboard on a group-A task (ML fundamentals) in a real pseudo-terminal: dropout's wrong save is named, the fixed one passes."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import pytest

from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = catalog.get("dropout").solution.read_text()
NO_RESCALE = SOLUTION.replace("return x * keep / (1 - p)", "return x * keep")


def save(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a distinct mtime even on coarse clocks


def test_dropout_session_names_the_missing_rescale_then_passes(tmp_path, drill_home):
    assert NO_RESCALE != SOLUTION
    target = tmp_path / "dropout.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "dropout", "--file", str(target)],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    child.logfile_read = seen = io.StringIO()
    try:
        child.expect("Template written")
        assert "def dropout(x, p, training, generator=None)" in target.read_text()
        child.expect("not implemented yet")
        save(target, NO_RESCALE)
        child.expect("dropout-no-rescale")
        child.send("h")
        child.expect("hint 1/3")
        assert "line 10" in seen.getvalue()  # the trace names the unscaled return
        save(target, SOLUTION)
        child.expect("PASSED")
        child.expect("Solved dropout")
        child.expect("any other key ends")
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


TORCH_BATCHNORM = '''from torch import nn


class BatchNorm(nn.BatchNorm1d):
    """torch's own BatchNorm1d, as-is: its semantics are the task's contract."""
'''

TORCH_BCE = '''import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    return F.binary_cross_entropy_with_logits(logits, targets)


def fit_logistic_regression(x, y, lr, steps):
    w, b = x.new_zeros(x.shape[1]), x.new_zeros(())
    for _ in range(steps):
        e = torch.sigmoid(x @ w + b) - y
        w, b = w - lr * x.T @ e / len(y), b - lr * e.mean()
    return w, b
'''


@pytest.mark.parametrize(("source", "task", "code"), [(TORCH_BATCHNORM, "batchnorm", "uses-builtin-batchnorm"),
                                                      (TORCH_BCE, "logistic_regression", "logreg-uses-builtin")])  # fmt: skip
def test_torch_own_module_passes_with_builtins_allowed_and_is_named_without(tmp_path, source, task, code):
    from drill.grade.battery import run_battery

    path = tmp_path / f"{task}_torch.py"
    path.write_text(source)
    allowed = run_battery(path, task=task, device="cpu", allow_builtins=True)
    assert allowed.passed, [(c.id, c.message) for c in allowed.checks if c.status in ("fail", "error")]
    refused = run_battery(path, task=task, device="cpu")
    assert not refused.passed and [d.code for d in refused.diagnosis] == [code]
