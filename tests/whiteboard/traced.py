"""Run ``drill grade --trace``'s trace on a file in a real user side (a forked process), as a grade does."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import torch

from drill.grade import remote
from drill.grade.context import Context
from drill.grade.tasks import TASKS
from drill.grade.tracing import run_trace
from drill.text.messages import translated


@contextmanager
def user_context(path: Path, task: str, timeout: float = 30):
    """A Context on a user side that has loaded ``path``; the user side is closed on exit."""
    user = remote.UserProcess(remote.zygote(), timeout=timeout, device=torch.device("cpu"), memory=None)
    try:
        user.load(str(path))
        yield Context(path=path, entry=user.entry(TASKS[task].entry), device=torch.device("cpu"), user=user)
    finally:
        user.close()


def trace(path: Path, task: str, failed: frozenset[str] = frozenset()) -> dict:
    """run_trace's result with the rows, as if the grade's ``failed`` checks had failed."""
    with user_context(path, task) as ctx:
        return run_trace(task, ctx, rows=True, failed=failed)


def zh(words) -> str:
    """A trace's words (an Ev from the judge) as the Chinese screen shows them."""
    return translated(words, "zh")


def the_line(path: Path, text: str) -> int:
    """The one line of ``path`` that holds ``text`` (where a test put the bug)."""
    lines = [n for n, code in enumerate(path.read_text().splitlines(), 1) if text in code]
    assert len(lines) == 1, (path.name, text, lines)
    return lines[0]
