"""The exercise catalog (tasks.yaml, Rustlings-style) and each task's status from the history.

One versioned file holds every task's level, titles, template, reference solution and three
hints (nudge, stronger, nearly the solution), so adding an exercise is data, not code.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from drill.errors import DrillError

CATALOG = Path(__file__).with_name("tasks.yaml")
FORMAT_VERSION = 1
HINTS = 3


@dataclass(frozen=True)
class Exercise:
    id: str
    level: str
    title: dict[str, str]
    template: Path
    solution: Path
    hints: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class Status:
    """untried, failed, or passed with the best whiteboard time (None if passed only by drill grade)."""

    exercise: Exercise
    state: str
    best_seconds: float | None = None

    def to_json(self) -> dict:
        e = self.exercise
        return {"id": e.id, "level": e.level, "title": e.title["en"], "title_zh": e.title["zh"],
                "status": self.state, "best_seconds": self.best_seconds}  # fmt: skip


@lru_cache(maxsize=None)
def load(path: Path = CATALOG) -> dict[str, Exercise]:
    """Every exercise by id, in file order; a malformed catalog is a DrillError naming the entry."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data.get("format_version") != FORMAT_VERSION:
        raise DrillError(f"{path}: format_version {data.get('format_version')!r} is not {FORMAT_VERSION}; upgrade drill")
    exercises = {}
    for entry in data["tasks"]:
        try:
            exercise = Exercise(
                entry["id"], entry["level"], dict(entry["title"]), path.parent / entry["template"],
                path.parent / entry["solution"], tuple(dict(h) for h in entry["hints"]),
            )  # fmt: skip
        except (KeyError, TypeError) as exc:
            raise DrillError(f"{path}: task {entry.get('id', '?')}: missing or malformed {exc}") from None
        if len(exercise.hints) != HINTS or not exercise.template.is_file() or not exercise.solution.is_file():
            raise DrillError(f"{path}: task {exercise.id}: needs {HINTS} hints and existing template and solution files")
        exercises[exercise.id] = exercise
    return exercises


def get(task: str) -> Exercise:
    exercises = load()
    if task not in exercises:
        from drill.suggest import hint

        raise DrillError(f"unknown task {task!r}{hint(task, exercises)} (tasks: {', '.join(exercises)})")
    return exercises[task]


def statuses(conn: sqlite3.Connection) -> list[Status]:
    """Each exercise's status from grade_runs (grade and whiteboard); best time from whiteboard passes."""
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT task, MAX(passed), MIN(CASE WHEN passed AND source = 'whiteboard' THEN seconds END)"
            " FROM grade_runs GROUP BY task"
        )
    }
    result = []
    for exercise in load().values():
        passed, best = rows.get(exercise.id, (None, None))
        state = "untried" if passed is None else "passed" if passed else "failed"
        result.append(Status(exercise, state, best))
    return result
