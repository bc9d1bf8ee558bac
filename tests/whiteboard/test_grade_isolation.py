"""Hostile files: each ends as a clear failed check or a correct verdict, never a hang, a traceback or a
pass, and none leaves a process behind (checked in the process table after every grade)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from drill.grade.isolation import JudgeFailed, Worker
from drill.grade.run import make_request
from drill.grade.user import sandbox

from whiteboard_impls import HOSTILE, IMPLS

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
MARKER = f"DRILL_TEST_MARKER={uuid.uuid4().hex}"

CASES = {
    "syntax_error": ("load.import", "syntax error at line 5"),
    "import_error": ("load.import", "No module named 'flash_attn_that_is_not_installed'"),
    "exception": ("shape.4d", "exception.py:5 in helper"),
    "sys_exit": ("shape.4d", "called sys.exit(3)"),
    "os_exit": ("isolation.exit", "exited with code 7"),
    "segfault": ("isolation.crash", "SIGSEGV"),
    "print_flood": ("isolation.output", "printed more than 2 MiB"),
    "infinite_loop": ("isolation.timeout", "still running after 2 s"),
    # Faked passes: the judge computes every reference, so nothing the file patches reaches it.
    "patch_softmax": ("numerical.seed0", "max error"),
    "import_reference": ("rules.no-drill-import", "may not import drill"),
    "patch_battery": ("rules.no-drill-import", "may not import drill"),
    "lazy_drill_import": ("shape.4d", "may not import drill"),
    "forge_server": ("shape.4d", "output has shape [1]"),
    "forged_report": ("isolation.protocol", "malformed or forged reply"),
    "junk_reply": ("isolation.protocol", "malformed or forged reply"),
    "close_channel": ("isolation.protocol", "closed its channel to drill while still running"),
    "disable_torch_function": ("rules.builtins", "at the aten level"),
    "grad_disabled": ("gradient.qkv", "does not require grad"),
    # Lifetime and limits.
    "grandchild_holds_pipe": ("isolation.exit", "exited with code 3"),
    "touch_memory": ("isolation.memory", "512 MiB"),
    "slow_correct": ("isolation.timeout", "too slow"),
    "slow_backward": ("isolation.timeout", "then one ran"),
    "kill_parent": ("isolation.exit", "drill's zygote, is gone"),
}
if dict(sandbox.available())["landlock signals"] is None:  # the kill is refused: the user's own line raised
    CASES["kill_parent"] = ("shape.4d", "PermissionError")
TIMEOUTS = {"infinite_loop": 2, "slow_correct": 2, "slow_backward": 3}


def marked(marker: str = MARKER) -> set[int]:
    """Live processes started under ``marker`` (drill's and anything they spawned)."""
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if marker.encode() in env and stat[stat.rindex(")") + 2] != "Z":
            found.add(int(pid))
    return found


def children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return {int(n) for n in f.read().split()}


@pytest.fixture(scope="module")
def judge():
    name, value = MARKER.split("=")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(name, value)
        with Worker(threads=1) as worker:
            yield worker
    assert marked() == set()  # closing drill's judge ends everything it started


def grade(judge, path: Path, **options):
    timeout = options.pop("timeout", 60)
    report = judge.grade(make_request(path, device="cpu", **options), timeout)
    drill_own = {judge.proc.pid} | children(judge.proc.pid)  # the judge and its zygote stay warm
    assert marked() - drill_own == set(), "a process outlived the grade"
    return report


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file_fails_cleanly(judge, name):
    check_id, evidence = CASES[name]
    options = {"memory_limit": 512 << 20} if name == "touch_memory" else {}
    report = grade(judge, HOSTILE / f"{name}.py", timeout=TIMEOUTS.get(name, 60), **options)
    assert not report.passed
    failing = next(c for c in report.checks if c.status in ("fail", "error"))
    assert failing.id == check_id, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert evidence in failing.message


def test_os_exit_reports_the_last_output(judge):
    report = grade(judge, HOSTILE / "os_exit.py")
    assert "about to leave" in report.checks[-1].message


def test_leftover_processes_are_killed_and_reported(judge):
    report = grade(judge, HOSTILE / "spawns_sleepers.py")
    assert report.passed  # the attention is right; the leftovers are a warning
    left = next(c for c in report.checks if c.id == "isolation.processes")
    assert left.status == "warn" and "sleep" in left.message


def test_a_module_spawning_in_its_constructor_leaves_nothing(judge):
    report = grade(judge, HOSTILE / "sleeper_module.py", task="mha")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert "processes running (sleep)" in next(c for c in report.checks if c.id == "isolation.processes").message


def test_a_correct_save_after_a_hostile_one_passes(judge):
    for name in ("grad_disabled", "patch_softmax", "forge_server"):
        assert not grade(judge, HOSTILE / f"{name}.py").passed
        assert grade(judge, IMPLS / "correct" / "sdpa_matmul.py").passed


def test_allow_builtins_does_not_lift_the_drill_import_rule(judge):
    report = grade(judge, HOSTILE / "import_reference.py", allow_builtins=True)
    assert [c.id for c in report.checks] == ["rules.no-drill-import"]


def test_a_fault_of_the_grader_is_an_internal_error_not_the_users(judge):
    request = {**make_request(IMPLS / "correct" / "sdpa_matmul.py", device="cpu"), "option_the_judge_lacks": 1}
    with pytest.raises(JudgeFailed, match=r"internal error of drill's grader \(not your code\).*rerun with --debug") as info:
        judge.grade(request, 60)
    assert "Traceback" in "".join(info.value.__notes__)
    assert grade(judge, IMPLS / "correct" / "sdpa_matmul.py").passed  # the judge survives its own fault


def test_closing_a_worker_twice_leaves_other_descriptors_alone():
    worker = Worker()
    worker.close()
    read_fd, write_fd = os.pipe()  # likely reuses the numbers the worker just closed
    try:
        worker.close()
        os.fstat(read_fd), os.fstat(write_fd)  # raises OSError if the second close took them
    finally:
        os.close(read_fd), os.close(write_fd)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP], ids=lambda s: s.name)
def test_killing_drill_mid_grade_leaves_no_process(sig):
    marker = f"DRILL_TEST_MARKER={uuid.uuid4().hex}"
    name, value = marker.split("=")
    env = {**os.environ, name: value, "PYTHONPATH": str(ROOT)}
    drill = subprocess.Popen([sys.executable, "-m", "drill", "grade", str(HOSTILE / "infinite_loop.py"), "--device", "cpu"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(marked(marker)) < 4 and time.monotonic() < deadline:  # drill, judge, zygote, the looping user side
            time.sleep(0.1)
        assert len(marked(marker)) >= 4
        drill.send_signal(sig)
        drill.wait()
        deadline = time.monotonic() + 2
        while marked(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marked(marker) == set()
    finally:
        drill.kill()
        drill.wait()
