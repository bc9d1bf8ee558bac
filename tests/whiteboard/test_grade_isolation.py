"""Hostile files run in the child process: each ends as a clear failed check, never a hang or a traceback."""

from __future__ import annotations

import time

import pytest

from drill.grade import grade_file

from whiteboard_impls import HOSTILE

CASES = {
    "syntax_error": ("load.import", "syntax error at line 5"),
    "import_error": ("load.import", "No module named 'flash_attn_that_is_not_installed'"),
    "exception": ("shape.4d", "exception.py:5 in helper"),
    "sys_exit": ("shape.4d", "called sys.exit(3)"),
    "os_exit": ("isolation.exit", "exited with code 7"),
    "segfault": ("isolation.crash", "SIGSEGV"),
    "print_flood": ("isolation.output", "printed more than 2 MiB"),
    "infinite_loop": ("isolation.timeout", "still running after 2 s"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file_fails_cleanly(name):
    check_id, evidence = CASES[name]
    started = time.monotonic()
    report = grade_file(HOSTILE / f"{name}.py", timeout=2 if name == "infinite_loop" else 60)
    assert not report.passed
    failing = next(c for c in report.checks if c.status in ("fail", "error"))
    assert failing.id == check_id
    assert evidence in failing.message
    assert time.monotonic() - started < 60


def test_os_exit_reports_the_last_output():
    report = grade_file(HOSTILE / "os_exit.py")
    assert "about to leave" in report.checks[-1].message



def test_closing_a_worker_twice_leaves_other_descriptors_alone():
    import os

    from drill.grade.isolation import Worker

    worker = Worker()
    worker.close()
    read_fd, write_fd = os.pipe()  # likely reuses the numbers the worker just closed
    try:
        worker.close()
        os.fstat(read_fd), os.fstat(write_fd)  # raises OSError if the second close took them
    finally:
        os.close(read_fd), os.close(write_fd)
