"""The exercise catalog (Rustlings-style) and each task's status from the history.

Every task folder (drill/grade/tasks/<id>/) holds a versioned ``task.yaml`` with the task's
track, level, titles and three hints (nudge, stronger, nearly the solution; a hint may list the
diagnosis ``codes:`` it answers, so the session shows it first after that diagnosis), next to its
``template.py`` and ``solution.py``: adding an exercise touches that folder only. The catalog
lists them grouped by track, in TRACKS order, and by level inside a track. The YAML is parsed
once per change of any task.yaml (drill.compiled keeps the documents), not on every start.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from drill import compiled
from drill.errors import DrillError

FOLDER = Path(__file__).resolve().parents[1] / "grade" / "tasks"  # not imported: `drill` alone must not load drill.grade
FORMAT_VERSION = 1
HINTS = 3
TRACKS = ("attention", "positions", "inference", "building blocks", "training", "alignment", "decoding", "tokenization", "ml fundamentals", "systems", "kernels")
LEVELS = ("L1", "L2", "L3")


@dataclass(frozen=True)
class Exercise:
    id: str
    track: str
    level: str
    title: dict[str, str]
    template: Path
    solution: Path
    hints: tuple[dict[str, str], ...]
    hint_codes: tuple[frozenset[str], ...] = ()  # per hint, the diagnosis codes it answers (task.yaml `codes:`)


@dataclass(frozen=True)
class Status:
    """untried, failed, or passed with the best whiteboard time (None if passed only by drill grade)."""

    exercise: Exercise
    state: str
    best_seconds: float | None = None

    def to_json(self) -> dict:
        e = self.exercise
        return {"id": e.id, "track": e.track, "level": e.level, "title": e.title["en"], "title_zh": e.title["zh"],
                "status": self.state, "best_seconds": self.best_seconds}  # fmt: skip


@cache
def load(root: Path = FOLDER) -> dict[str, Exercise]:
    """Every exercise by id, by track, then level, then id; a malformed entry is a DrillError naming its file."""
    documents = compiled.yaml_documents("tasks", root, sorted(root.glob("*/task.yaml")))
    exercises = [_exercise(path, data or {}) for path, data in documents]
    return {e.id: e for e in sorted(exercises, key=lambda e: (TRACKS.index(e.track), LEVELS.index(e.level), e.id))}


def _exercise(path: Path, data: dict) -> Exercise:
    if data.get("format_version") != FORMAT_VERSION:
        raise DrillError("{path}: format_version {given!r} is not {version}; upgrade drill", path=str(path), given=data.get("format_version"), version=FORMAT_VERSION)
    folder = path.parent
    try:
        hints = tuple({lang: h[lang] for lang in ("en", "zh")} for h in data["hints"])
        hint_codes = tuple(frozenset(h.get("codes") or ()) for h in data["hints"])
        exercise = Exercise(folder.name, data["track"], data["level"], dict(data["title"]), folder / "template.py",
                            folder / "solution.py", hints, hint_codes)  # fmt: skip
    except (KeyError, TypeError) as exc:
        raise DrillError("{path}: missing or malformed {what}", path=str(path), what=str(exc)) from None
    if exercise.track not in TRACKS or exercise.level not in LEVELS:
        raise DrillError("{path}: track must be one of {tracks} and level one of {levels}", path=str(path), tracks=", ".join(TRACKS), levels=", ".join(LEVELS))
    if len(exercise.hints) != HINTS or not exercise.template.is_file() or not exercise.solution.is_file():
        raise DrillError("{path}: needs {n} hints and the files template.py and solution.py beside it", path=str(path), n=HINTS)
    return exercise


def get(task: str) -> Exercise:
    exercises = load()
    if task not in exercises:
        from drill.text.suggest import hint

        raise DrillError("unknown task {task!r}{hint} (tasks: {tasks})", task=task, hint=hint(task, exercises), tasks=", ".join(exercises))
    return exercises[task]


def statuses(conn: sqlite3.Connection) -> list[Status]:
    """Each exercise's status from grade_runs (grade, whiteboard, notebook); best time from whiteboard and notebook passes."""
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT task, MAX(passed), MIN(CASE WHEN passed AND source IN ('whiteboard', 'notebook') THEN seconds END)"
            " FROM grade_runs GROUP BY task"
        )
    }
    result = []
    for exercise in load().values():
        passed, best = rows.get(exercise.id, (None, None))
        state = "untried" if passed is None else "passed" if passed else "failed"
        result.append(Status(exercise, state, best))
    return result
