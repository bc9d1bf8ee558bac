"""Paths of the whiteboard fixtures: real files, one implementation each.

The mutants (one classic bug each) live in their task's folder, drill/grade/tasks/<task>/mutants/,
where ``drill selftest`` finds them too; broken/ keeps the one that belongs to no task.
"""

from __future__ import annotations

from pathlib import Path

IMPLS = Path(__file__).parent / "impls"
TASKS_DIR = Path(__file__).resolve().parents[2] / "drill" / "grade" / "tasks"
CORRECT = sorted((IMPLS / "correct").glob("*.py"))
BROKEN = sorted([*TASKS_DIR.glob("*/mutants/*.py"), *(IMPLS / "broken").glob("*.py")], key=lambda p: p.name)
HOSTILE = IMPLS / "hostile"


def mutant(name: str) -> Path:
    """The mutant file ``name`` (e.g. "scale-missing__1.py"), whichever task folder holds it."""
    return next(p for p in BROKEN if p.name == name)


def expected_code(path: Path) -> str:
    """<code>__<n>.py must be diagnosed as <code>."""
    return path.stem.split("__")[0]


def correct_files(task: str) -> list[Path]:
    """The task's correct fixtures, ``<task>_<style>.py``, not those of a task whose name extends it
    (``grpo_successors_where.py`` is no grpo file, ``flash_decoding_loop.py`` no flash one)."""
    names = {p.name for p in TASKS_DIR.iterdir() if (p / "task.py").exists()}
    longer = [other for other in names if other != task and other.startswith(f"{task}_")]
    return [p for p in CORRECT if p.stem.startswith(f"{task}_") and not any(p.stem.startswith(f"{o}_") for o in longer)]
