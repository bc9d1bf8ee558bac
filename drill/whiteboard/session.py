"""One whiteboard session: template, timer, re-grade on every save, hints, reset, record the result.

Typer-free and torch-free: the grader runs in a warm child process (drill.grade.warm), keys
and rendering are injected, so tests can drive a session without a terminal.
"""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from drill import store
from drill.errors import DrillError
from drill.grade.report import Report
from drill.grade.run import make_request
from drill.grade.tasks import TASKS
from drill.whiteboard import catalog
from drill.whiteboard.watch import FileWatcher

POLL_S = 0.2
GRADE_TIMEOUT_S = 10.0  # per save: an infinite loop is stopped; the next save gets a fresh user side
NOTHING_YET = ["not-implemented"]  # a save still raising NotImplementedError is not an attempt


class Keys(Protocol):
    def read(self, timeout: float) -> str | None: ...


class View(Protocol):
    def starting(self, exercise: catalog.Exercise, path: Path, resumed: bool, minutes: int) -> None: ...
    def graded(self, report: Report, left_s: float) -> None: ...
    def hint(self, number: int, text: str) -> None: ...
    def reset(self, path: Path) -> None: ...


@dataclass(frozen=True)
class Outcome:
    task: str
    passed: bool
    seconds: float
    stopped: str  # passed | quit | time


def pick_task(conn: sqlite3.Connection, task: str | None) -> catalog.Exercise:
    """The named task, else the first gradable one not passed yet."""
    if task is not None:
        exercise = catalog.get(task)
        if exercise.id not in TASKS:
            raise DrillError(f"task {task!r} has no grader yet; choose one of {', '.join(TASKS)}")
        return exercise
    open_tasks = [s.exercise for s in catalog.statuses(conn) if s.exercise.id in TASKS and s.state != "passed"]
    return open_tasks[0] if open_tasks else catalog.get(next(iter(TASKS)))


def prepare(exercise: catalog.Exercise, path: Path) -> bool:
    """Write the template unless the file exists; True when resuming the user's file."""
    if path.exists():
        if not path.is_file():
            raise DrillError(f"{path}: not a file")
        return True
    write_template(exercise, path)
    return False


def write_template(exercise: catalog.Exercise, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(exercise.template.read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        raise DrillError(f"{path}: cannot write the template: {exc.strerror}") from None


def open_editor(editor: str | None, path: Path) -> None:
    """Start $EDITOR on the file without waiting: the session keeps watching while you edit."""
    if not editor:
        raise DrillError("--editor: set $EDITOR (or $VISUAL), e.g. EDITOR='code -w'")
    try:
        subprocess.Popen([*shlex.split(editor), str(path)])
    except OSError as exc:
        raise DrillError(f"--editor: cannot start {editor!r}: {exc.strerror}") from None


class Session:
    def __init__(self, conn, exercise: catalog.Exercise, path: Path, grader, view: View, keys: Keys, *, lang: str, minutes: int):
        self.conn, self.exercise, self.path, self.grader = conn, exercise, path, grader
        self.view, self.keys, self.lang = view, keys, lang
        self.limit_s = minutes * 60
        self.hints_shown = 0

    def run(self) -> Outcome:
        started = time.monotonic()
        watcher = FileWatcher(self.path)
        passed = self._grade(started)
        while not passed:
            elapsed = time.monotonic() - started
            if elapsed >= self.limit_s:
                return Outcome(self.exercise.id, False, elapsed, "time")
            key = self.keys.read(min(POLL_S, self.limit_s - elapsed))
            if key == "q":
                return Outcome(self.exercise.id, False, time.monotonic() - started, "quit")
            if key == "h":
                self._hint()
            elif key == "r":
                write_template(self.exercise, self.path)
                self.view.reset(self.path)
            if watcher.changed():
                passed = self._grade(started)
        return Outcome(self.exercise.id, True, time.monotonic() - started, "passed")

    def _hint(self) -> None:
        self.hints_shown = min(self.hints_shown + 1, len(self.exercise.hints))
        hint = self.exercise.hints[self.hints_shown - 1]
        self.view.hint(self.hints_shown, hint.get(self.lang, hint["en"]))

    def _grade(self, started: float) -> bool:
        request = make_request(self.path, task=self.exercise.id, device="cpu", timeout=GRADE_TIMEOUT_S)
        report = self.grader.grade(request, GRADE_TIMEOUT_S)
        elapsed = time.monotonic() - started
        codes = [d.code for d in report.diagnosis]
        if report.passed or codes != NOTHING_YET:
            store.record_grade_run(self.conn, task=self.exercise.id, file=str(self.path), source="whiteboard",
                                   passed=report.passed, codes=codes, seconds=elapsed)  # fmt: skip
        self.view.graded(report, max(0.0, self.limit_s - elapsed))
        return report.passed
