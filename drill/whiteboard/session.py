"""One whiteboard session: template, timer, re-grade on every save, hints, reset, record the result.

Typer-free and torch-free: the grader runs in a warm child process (drill.grade.warm), keys
and rendering are injected, so tests can drive a session without a terminal.
"""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from drill.history import store
from drill.errors import DrillError
from drill.grade.report import Report
from drill.grade.run import make_request
from drill.grade.tasks import TASKS
from drill.whiteboard import catalog
from drill.whiteboard.watch import FileWatcher

GRADE_TIMEOUT_S = 10.0  # per save: an infinite loop is stopped; the next save gets a fresh user side
NOTHING_YET = ["not-implemented"]  # a save still raising NotImplementedError is not an attempt
CONFIRM_S = 30.0  # how long `r` and `s` wait for their y
OFFER_S = 20.0  # after a pass or time up, how long `s` (the solution) is offered before the command ends


class Keys(Protocol):
    def read(self, timeout: float, wake=None) -> str | None: ...


class View(Protocol):
    def starting(self, exercise: catalog.Exercise, path: Path, resumed: bool, minutes: int) -> None: ...
    def tick(self, left_s: float) -> None: ...
    def graded(self, report: Report, left_s: float) -> None: ...
    def already_passing(self) -> None: ...
    def hint(self, number: int, total: int, text: str) -> None: ...
    def no_more_hints(self, total: int) -> None: ...
    def confirm_reset(self, path: Path, backup: Path) -> None: ...
    def reset(self, path: Path, backup: Path | None) -> None: ...
    def reset_kept(self) -> None: ...
    def times_up(self) -> None: ...
    def confirm_solution(self) -> None: ...
    def solution_kept(self) -> None: ...
    def offer_solution(self) -> None: ...
    def finished(self) -> None: ...


@dataclass(frozen=True)
class Outcome:
    task: str
    passed: bool  # solved in this session
    seconds: float
    stopped: str  # passed | quit | interrupted | time | solution (asked for the solution before passing)
    hints: int = 0
    failing_saves: int = 0
    limit_s: float = 0.0

    @property
    def attempted(self) -> bool:
        """A solve or a failing save; a template left as it is (q, or the time running out) is no attempt."""
        return self.passed or self.failing_saves > 0

    @property
    def reviewable(self) -> bool:
        """Rated on the task's card: an attempt, or giving up by asking for the solution."""
        return self.attempted or self.stopped == "solution"

    @property
    def result(self) -> str:
        """What the history keeps of the session: passed | unsolved | solution | not attempted."""
        if self.passed:
            return "passed"
        if self.stopped == "solution":
            return "solution"
        return "unsolved" if self.attempted else "not attempted"


def pick_task(conn: sqlite3.Connection, task: str | None) -> catalog.Exercise:
    """The named task, else the first gradable one not passed yet."""
    if task is not None:
        exercise = catalog.get(task)
        if exercise.id not in TASKS:
            raise DrillError("task {task!r} has no grader yet; choose one of {tasks}", task=task, tasks=", ".join(TASKS))
        return exercise
    open_tasks = [s.exercise for s in catalog.statuses(conn) if s.exercise.id in TASKS and s.state != "passed"]
    return open_tasks[0] if open_tasks else catalog.get(next(iter(TASKS)))


def prepare(exercise: catalog.Exercise, path: Path) -> bool:
    """Write the template unless the file exists; True when resuming the user's file."""
    if path.exists():
        if not path.is_file():
            raise DrillError("{path}: not a file", path=str(path))
        return True
    write_template(exercise, path)
    return False


def write_template(exercise: catalog.Exercise, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(exercise.template.read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        raise DrillError("{path}: cannot write the template: {why}", path=str(path), why=exc.strerror) from None


def open_editor(editor: str | None, path: Path) -> None:
    """Start $EDITOR on the file without waiting: the session keeps watching while you edit."""
    if not editor:
        raise DrillError("--editor: set $EDITOR (or $VISUAL), e.g. EDITOR='code -w'")
    try:
        subprocess.Popen([*shlex.split(editor), str(path)])
    except OSError as exc:
        raise DrillError("--editor: cannot start {editor!r}: {why}", editor=editor, why=exc.strerror) from None


def backup_path(path: Path) -> Path:
    """``x.py.bak``, or a timestamped ``x.py.20260101-120000.bak`` when that one exists already."""
    plain = path.with_name(path.name + ".bak")
    return plain if not plain.exists() else path.with_name(f"{path.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")


class Session:
    """``record``: a file that passes on the first grade counts as solved (default: it is only a resume)."""

    def __init__(self, conn, exercise: catalog.Exercise, path: Path, grader, view: View, keys: Keys, *, lang: str, minutes: float,
                 record: bool = False):  # fmt: skip
        self.conn, self.exercise, self.path, self.grader = conn, exercise, path, grader
        self.view, self.keys, self.lang = view, keys, lang
        self.limit_s = minutes * 60  # a mock interview gives the whiteboard what is left of its clock
        self.record = record
        self.hints_used: list[int] = []
        self.failing_saves = 0
        self.last_codes: set[str] = set()
        self.armed = record  # a pass is a solve once this session has seen the file fail or unimplemented

    def run(self) -> Outcome:
        started = time.monotonic()
        with FileWatcher(self.path) as watcher:
            try:
                return self._loop(started, watcher)
            except KeyboardInterrupt:  # Ctrl-C ends the session like q
                return self._outcome(started, False, "interrupted")
            finally:
                self.view.finished()

    def _outcome(self, started: float, passed: bool, stopped: str) -> Outcome:
        return Outcome(self.exercise.id, passed, time.monotonic() - started, stopped, len(self.hints_used), self.failing_saves, self.limit_s)

    def _loop(self, started: float, watcher: FileWatcher) -> Outcome:
        if self._grade(started, saved=False):
            return self._outcome(started, True, "passed")
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= self.limit_s:
                self.view.times_up()
                return self._outcome(started, False, "time")
            left = self.limit_s - elapsed
            self.view.tick(left)
            key = self.keys.read(min(left, 1.0 - elapsed % 1.0 + 0.01), wake=watcher.fileno())  # wake at the next whole second
            if key == "q":
                return self._outcome(started, False, "quit")
            if key == "h":
                self._hint()
            elif key == "r":
                self._reset(started)
            elif key == "s" and self._confirmed(started, self.view.confirm_solution, self.view.solution_kept):
                return self._outcome(started, False, "solution")
            if watcher.changed() and self._grade(started, saved=True):
                return self._outcome(started, True, "passed")

    def _hint(self) -> None:
        hints = self.exercise.hints
        unseen = [i for i in range(len(hints)) if i not in self.hints_used]
        if not unseen:
            self.view.no_more_hints(len(hints))
            return
        codes = self.exercise.hint_codes
        pick = next((i for i in unseen if i < len(codes) and codes[i] & self.last_codes), unseen[0])  # the diagnosis first
        self.hints_used.append(pick)
        self.view.hint(len(self.hints_used), len(hints), hints[pick].get(self.lang, hints[pick]["en"]))

    def _confirmed(self, started: float, ask, kept) -> bool:
        """Ask, then wait for y (at most CONFIRM_S, never past the time limit); any other key keeps things as they are."""
        ask()
        left = self.limit_s - (time.monotonic() - started)
        if self.keys.read(max(0.0, min(CONFIRM_S, left))) == "y":
            return True
        kept()
        return False

    def _reset(self, started: float) -> None:
        backup = backup_path(self.path)
        if not self._confirmed(started, lambda: self.view.confirm_reset(self.path, backup), self.view.reset_kept):
            return
        saved = None
        if self.path.is_file():
            try:
                shutil.copy2(self.path, backup)
            except OSError as exc:
                raise DrillError("{path}: cannot keep a backup, nothing was reset: {why}", path=str(backup), why=exc.strerror) from None
            saved = backup
        write_template(self.exercise, self.path)
        self.view.reset(self.path, saved)

    def _grade(self, started: float, *, saved: bool) -> bool:
        """Grade the file; True when this is a solve."""
        request = make_request(self.path, task=self.exercise.id, device="cpu", seed=None, timeout=GRADE_TIMEOUT_S)
        report = self.grader.grade(request, GRADE_TIMEOUT_S)
        elapsed = time.monotonic() - started
        codes = [d.code for d in report.diagnosis]
        self.last_codes = set(codes)
        attempt = codes != NOTHING_YET
        solved = report.passed and self.armed
        if solved or (not report.passed and attempt):
            store.record_grade_run(self.conn, task=self.exercise.id, file=str(self.path), source="whiteboard",
                                   passed=report.passed, codes=codes, seconds=elapsed)  # fmt: skip
        if not report.passed:
            self.armed = True
            if saved and attempt:
                self.failing_saves += 1
        self.view.graded(report, max(0.0, self.limit_s - elapsed))
        if report.passed and not solved:
            self.view.already_passing()
        return solved


def play(conn: sqlite3.Connection, exercise: catalog.Exercise, path: Path, view: View, on_end, *, lang: str, minutes: float,
         record: bool = False) -> tuple[Outcome, bool]:
    """A session on the keyboard with a warm judge, recorded; ``on_end(outcome, review)`` prints its closing
    lines before the solution is offered. Returns the outcome and whether the solution was asked for."""
    from drill.grade.warm import WarmGrader
    from drill.whiteboard.keys import KeyReader

    with KeyReader() as keys:
        with WarmGrader(warmup=make_request(exercise.solution, task=exercise.id, device="cpu")) as grader:
            outcome = Session(conn, exercise, path, grader, view, keys, lang=lang, minutes=minutes, record=record).run()
        on_end(outcome, record_outcome(conn, outcome, minutes))
        return outcome, wants_solution(outcome, keys, view)


def wants_solution(outcome: Outcome, keys: Keys, view: View) -> bool:
    """After a pass or time up, offer the solution for OFFER_S seconds: True when ``s`` is pressed
    (a solution asked for before the pass was confirmed in the session already)."""
    if outcome.stopped == "solution":
        return True
    if outcome.stopped not in ("passed", "time") or getattr(keys, "closed", False):
        return False
    view.offer_solution()
    return keys.read(OFFER_S) == "s"


def record_outcome(conn: sqlite3.Connection, outcome: Outcome, minutes: float):
    """Keep the session in the history (kind ``whiteboard``, its ``result`` in the options) and rate it on the
    task's FSRS card: (rating, next interval), (None, None) when already rated today, or None when the
    session was no attempt ("not attempted": no rating)."""
    from drill.practice import task_review

    session_id = store.start_session(conn, "whiteboard", {"task": outcome.task, "minutes": minutes, "result": outcome.result,
                                                          "hints": outcome.hints, "failing_saves": outcome.failing_saves})  # fmt: skip
    store.finish_session(conn, session_id, "complete" if outcome.stopped != "interrupted" else "incomplete")
    if not outcome.reviewable:
        return None
    intervals = task_review.intervals(conn, outcome.task)
    rating = task_review.record(conn, task_review.Session(outcome.task, outcome.passed, outcome.hints, outcome.failing_saves,
                                                          outcome.seconds, outcome.limit_s))  # fmt: skip
    return (rating, intervals[rating]) if rating is not None else (None, None)
