"""A whiteboard session in a real pseudo-terminal: template, a wrong save fails, a fixed save passes, history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
WRONG = catalog.get("sdpa").solution.read_text().replace(" / math.sqrt(q.size(-1))", "")


def save(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a distinct mtime even on coarse clocks


def test_session_wrong_then_fixed(tmp_path, drill_home):
    target = tmp_path / "x.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "sdpa", "--file", str(target)],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    try:
        child.expect("Template written")
        assert "raise NotImplementedError" in target.read_text()
        child.expect("not implemented yet")  # the untouched template, graded once the worker is up
        save(target, WRONG)
        child.expect("scale-missing")
        child.send("h")
        child.expect("hint 1/3")
        save(target, catalog.get("sdpa").solution.read_text())
        child.expect("PASSED")
        child.expect("Solved sdpa")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    listing = subprocess.run([sys.executable, "-m", "drill", "tasks", "--json"], env=env, capture_output=True, text=True, check=True)
    sdpa = next(t for t in json.loads(listing.stdout) if t["id"] == "sdpa")
    assert sdpa["status"] == "passed" and sdpa["best_seconds"] > 0
    stats = json.loads(subprocess.run([sys.executable, "-m", "drill", "stats", "--json"], env=env, capture_output=True, text=True, check=True).stdout)
    assert {"code": "scale-missing", "runs": 1} in stats["frequent_mistakes"]
    assert stats["today"]["whiteboard_passed"] == 1


HOSTILE = Path(__file__).parent / "impls" / "hostile"
UNIFORM = '''import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.zeros(*q.shape[:-1], k.shape[-2], dtype=q.dtype, device=q.device)  # every key weighs the same
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
'''


def _session(tmp_path, drill_home):
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "sdpa", "--file", str(tmp_path / "x.py")],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip
    child.expect("not implemented yet")
    return child, env


def test_a_save_that_disables_grad_does_not_fail_the_next_one(tmp_path, drill_home):
    child, _ = _session(tmp_path, drill_home)
    try:
        save(tmp_path / "x.py", (HOSTILE / "grad_disabled.py").read_text())
        child.expect("gradient.qkv")
        save(tmp_path / "x.py", catalog.get("sdpa").solution.read_text())
        child.expect("PASSED")
        child.expect("Solved sdpa")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_a_save_that_patches_torch_cannot_make_a_later_wrong_save_pass(tmp_path, drill_home):
    child, env = _session(tmp_path, drill_home)
    try:
        save(tmp_path / "x.py", (HOSTILE / "patch_softmax.py").read_text())  # softmax patched to uniform weights
        child.expect("FAILED")
        save(tmp_path / "x.py", UNIFORM)  # what the patched softmax computes: wrong against the real reference
        child.expect("FAILED")
        child.send("q")
        child.expect(pexpect.EOF)
        assert "Solved" not in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 1
    listing = subprocess.run([sys.executable, "-m", "drill", "tasks", "--json"], env=env, capture_output=True, text=True, check=True)
    assert next(t for t in json.loads(listing.stdout) if t["id"] == "sdpa")["status"] != "passed"
