"""What the notebook magics do, free of IPython: grade a cell, pick a hint, unlock a solution.

A cell is graded as ``drill grade`` grades a file: its source is written to a file of its own
and handed to :func:`drill.grade.grade_file`, so it runs only on the isolated user side, never
in the kernel's process (which never imports torch either). The run is recorded in the same
history as the CLI's, as source ``notebook``: a notebook pass counts like a whiteboard solve (streaks,
best times, the task's FSRS card). A cell still raising NotImplementedError (a "Run all" on a fresh
notebook) is no attempt and is not recorded, as in the whiteboard.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

from drill.errors import DrillError
from drill.paths import data_home
from drill.whiteboard import catalog

if TYPE_CHECKING:
    from drill.grade.report import Report  # the grader is imported at the first grade, not by %load_ext

NOTHING_YET = ["not-implemented"]
LIMIT_S = 20 * 60  # a notebook has no clock: its passes are rated against the whiteboard's default limit


def cell_file(task: str) -> Path:
    """Where a task's last graded cell is kept (``DRILL_HOME/notebook/TASK.py``): the history names it."""
    return data_home() / "notebook" / f"{task}.py"


class Practice:
    """One kernel's practice: the hints each task has shown and its last diagnosis, for the hint order.

    The database connection is passed per call, opened by the magic that needs it.
    """

    def __init__(self) -> None:
        self.hints_shown: dict[str, list[int]] = {}
        self.last_codes: dict[str, set[str]] = {}
        self.started: dict[str, float] = {}  # the kernel's first grade of each task: a solve's time counts from it
        self.failing: dict[str, int] = {}  # failing attempts per task, for the rating of the pass

    def grade(self, conn: sqlite3.Connection, task: str, source: str, **options) -> Report:
        """Grade ``source`` as task ``task`` (options as :func:`drill.grade.grade_file`) and record it."""
        from drill.history import store
        from drill.grade import grade_file

        exercise = catalog.get(task)
        path = cell_file(exercise.id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n" + source, encoding="utf-8")  # line 1 is the %%drill line: the report's line numbers are the cell's
        except OSError as exc:
            raise DrillError("{path}: cannot write the cell for grading: {why}", path=str(path), why=exc.strerror) from None
        started = self.started.setdefault(exercise.id, time.monotonic())
        report = grade_file(path, task=exercise.id, **options)
        codes = [d.code for d in report.diagnosis]
        self.last_codes[exercise.id] = set(codes)
        if codes == NOTHING_YET:
            return report
        seconds = time.monotonic() - started
        store.record_grade_run(conn, task=report.task, file=str(path), source="notebook", passed=report.passed,
                               codes=codes, seconds=seconds)  # fmt: skip
        if report.passed:
            self._review(conn, exercise.id, seconds)
        else:
            self.failing[exercise.id] = self.failing.get(exercise.id, 0) + 1
        return report

    def _review(self, conn: sqlite3.Connection, task: str, seconds: float) -> None:
        """Rate the pass on the task's FSRS card as a whiteboard solve is (at most once a practice day)."""
        from drill.practice import task_review

        task_review.record(conn, task_review.Session(task, True, len(self.hints_shown.get(task, [])), self.failing.get(task, 0),
                                                     seconds, LIMIT_S))  # fmt: skip

    def hint(self, task: str, lang: str) -> tuple[int, int, str] | None:
        """(number, total, text) of the next unseen hint, the one about the last diagnosis first; None when all are shown."""
        exercise = catalog.get(task)
        shown = self.hints_shown.setdefault(exercise.id, [])
        unseen = [i for i in range(len(exercise.hints)) if i not in shown]
        if not unseen:
            return None
        codes, last = exercise.hint_codes, self.last_codes.get(exercise.id, set())
        pick = next((i for i in unseen if i < len(codes) and codes[i] & last), unseen[0])
        shown.append(pick)
        return len(shown), len(exercise.hints), exercise.hints[pick][lang]

    def solution(self, conn: sqlite3.Connection, task: str) -> str | None:
        """The reference solution once the history holds a pass of the task (by grade, whiteboard or notebook), else None."""
        exercise = catalog.get(task)
        passed = any(s.state == "passed" for s in catalog.statuses(conn) if s.exercise.id == exercise.id)
        return exercise.solution.read_text(encoding="utf-8") if passed else None
