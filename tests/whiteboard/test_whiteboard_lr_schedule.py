"""The whiteboard on a non-tensor task: lr_schedule's template, a step-by-step message, its hint, a pass."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
MUTANT = ROOT / "drill" / "grade" / "tasks" / "lr_schedule" / "mutants" / "lr-warmup-off-by-one__1.py"


def save(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))


def test_lr_schedule_session(tmp_path, drill_home):
    target = tmp_path / "lr.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "lr_schedule", "--file", str(target)],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    try:
        child.expect("Template written")
        assert "def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0)" in target.read_text()
        child.expect("not implemented yet")
        save(target, MUTANT.read_text())
        child.expect("lr-warmup-off-by-one")
        child.send("h")
        child.expect("hint 1/3")
        save(target, catalog.get("lr_schedule").solution.read_text())
        child.expect("PASSED")
        child.expect("Solved lr_schedule")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
