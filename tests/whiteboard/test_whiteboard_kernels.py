"""The kernels track in a real pseudo-terminal: triton_softmax from the template, through an unmasked
edge tile named by the guard, to a pass; and --bench on CPU says the interpreter is not timed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")
pytest.importorskip("triton", reason="Triton is not installed: pip install 'llm-drill[kernels]'")

ROOT = Path(__file__).resolve().parents[2]
TASK = catalog.get("triton_softmax")
UNMASKED = TASK.solution.read_text().replace("mask=mask, other=-float(\"inf\")", "")  # the load of the edge tile unmasked


def save(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a distinct mtime even on coarse clocks


def spawn(args: list[str], cwd: Path, drill_home: Path) -> pexpect.spawn:
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return pexpect.spawn(sys.executable, ["-m", "drill", *args], cwd=str(cwd), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))


def test_triton_softmax_from_the_template_to_a_pass(tmp_path, drill_home):
    assert UNMASKED != TASK.solution.read_text()
    target = tmp_path / "k.py"
    child = spawn(["whiteboard", "triton_softmax", "--file", str(target)], tmp_path, drill_home)
    try:
        child.expect("Template written")
        assert "@triton.jit" in target.read_text() and "raise NotImplementedError" in target.read_text()
        child.expect("not implemented yet")
        save(target, UNMASKED)
        child.expect("kernel-mask-missing")
        child.send("h")
        child.expect("hint 1/3")
        save(target, TASK.solution.read_text())
        child.expect("PASSED")
        child.expect("Solved triton_softmax")
        child.expect("any other key ends")
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@pytest.mark.slow  # CI's second run: pytest -m slow
@pytest.mark.parametrize("lang, words", [("en", "not timed|whose speed says nothing"), ("zh", "解释器运行")])
def test_bench_on_cpu_says_the_interpreter_is_not_timed(tmp_path, drill_home, lang, words):
    child = spawn(["grade", str(TASK.template), "--device", "cpu", "--bench", "--lang", lang], tmp_path, drill_home)
    child.expect(f"--bench[^\\n]*({words})")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # the template fails; a kernel is never timed on CPU, passing or not
