"""A task's reference solution, a second correct style, your file's diff against it, and the bank's
hand-write question on the same code: what a candidate compares after solving (or giving up).

Torch-free. Seeing the solution before any pass of the task is giving up on it: the task's FSRS
card is rated Again (at most once a practice day, like every task rating), so it comes back soon.
The second style is ``solution_alt.py`` beside ``solution.py``, shipped only for the tasks that have one.
"""

from __future__ import annotations

import ast
import difflib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from drill.whiteboard.catalog import Exercise

HANDWRITE_TAG = "hand-write"


@dataclass(frozen=True)
class Solution:
    task: str
    reference: str
    alternative: str | None  # a second correct style, where the task ships one
    diff: list[str] | None  # your file against the reference (unified diff lines); None without a file
    question: object | None  # the bank question asking to hand-write the same code


def alternative_path(exercise: Exercise) -> Path:
    return exercise.solution.with_name("solution_alt.py")


def passed(conn: sqlite3.Connection, task: str) -> bool:
    """Whether the history holds a pass of ``task``, by grade, whiteboard or notebook."""
    return conn.execute("SELECT 1 FROM grade_runs WHERE task = ? AND passed = 1 LIMIT 1", (task,)).fetchone() is not None


def _entry_points(exercise: Exercise) -> set[str]:
    """The public functions and classes the template asks for."""
    body = ast.parse(exercise.template.read_text(encoding="utf-8")).body
    return {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}


def handwrite_question(exercise: Exercise, bank) -> object | None:
    """The question tagged ``hand-write`` whose first code span calls one of the template's entry points
    (``Hand-write it: `softmax(x, dim=-1)` …``); the bank's prompts name the signature they ask for."""
    names = _entry_points(exercise)
    for q in bank.select(tags=[HANDWRITE_TAG]):
        span = re.search(r"`([A-Za-z_]\w*)\(", q.prompt.en)
        if span and span.group(1) in names:
            return q
    return None


def unified_diff(mine: str, reference: str, mine_name: str) -> list[str]:
    return list(difflib.unified_diff(mine.splitlines(), reference.splitlines(), mine_name, "solution.py", lineterm=""))


def load(exercise: Exercise, path: Path | None, bank) -> Solution:
    """Everything the solution screen shows; ``path``: your file, diffed when it exists."""
    reference = exercise.solution.read_text(encoding="utf-8")
    alt = alternative_path(exercise)
    mine = path.read_text(encoding="utf-8", errors="replace") if path is not None and path.is_file() else None
    diff = unified_diff(mine, reference, path.name) if mine is not None and path is not None else None
    return Solution(exercise.id, reference, alt.read_text(encoding="utf-8") if alt.is_file() else None, diff,
                    handwrite_question(exercise, bank))  # fmt: skip


def give_up(conn: sqlite3.Connection, task: str, limit_s: float):
    """Rate ``task`` Again for a solution seen before any pass: the next interval, or None when it was
    already rated today (its schedule is unchanged)."""
    from fsrs import Rating

    from drill.practice import task_review

    interval = task_review.intervals(conn, task)[Rating.Again]
    rating = task_review.record(conn, task_review.Session(task, False, 0, 0, 0.0, limit_s))
    return interval if rating is not None else None
