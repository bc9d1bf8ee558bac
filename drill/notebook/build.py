"""Practice notebooks as nbformat 4.5 JSON, written without any Jupyter package.

A task's notebook: the statement and contract, a setup cell (installs drill where it is missing,
as on Colab, then ``%load_ext drill``), the template under ``%%drill TASK``, the three hints
collapsed, a hint cell and a solution cell. ``--plan`` writes one per task, numbered in the
catalog's order (track, then level), and an index notebook linking them.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from drill.errors import DrillError
from drill.text.i18n import text
from drill.text.messages import Msg, translated
from drill.whiteboard import catalog

PACKAGE = "llm-drill[grade]"
WORDS = {
    "meta": Msg("**Track** {track} · **level** {level} · task id `{task}`"),
    "statement": Msg(
        "Write {entries} by hand in the cell under `%%drill {task}` and run it: the cell is graded by drill's "
        "isolated judge (shapes, mask leaks, numerics over several seeds, stability, gradients, the whiteboard rules), "
        "and a failure names the classic mistake with its fix. Every run is saved to your drill history."
    ),
    "contract": Msg("The contract:"),
    "setup": Msg("Run this first: it installs drill where it is missing (Colab) and loads the `%%drill` magic."),
    "install": Msg("# installs drill with its grader when this kernel lacks it (Colab, a fresh environment)"),
    "your_turn": Msg("Your code: replace `raise NotImplementedError`, then run the cell (Shift+Enter)."),
    "hints": Msg("Hints, from a nudge to nearly the solution:"),
    "hint_n": Msg("Hint {n}"),
    "hint_cell": Msg("Stuck? This cell shows the next hint; after a diagnosis, the hint about it comes first."),
    "solution_cell": Msg("After a pass, this cell shows the reference solution to compare with yours."),
    "plan_title": Msg("# drill study plan"),
    "plan_intro": Msg("One notebook per whiteboard task, by track and then by level. Open one, run the setup cell, "
                      "and write the function under `%%drill`. The cells below show your progress and today's plan."),
}


def say(key: str, lang: str, **values: object) -> str:
    return text(WORDS[key], lang, **values)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _markdown(cell_id: str, text: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _lines(text)}


def _code(cell_id: str, text: str) -> dict:
    return {"cell_type": "code", "id": cell_id, "metadata": {}, "execution_count": None, "outputs": [], "source": _lines(text)}


def _notebook(cells: list[dict], lang: str) -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "drill": {"lang": lang},
        },
        "cells": cells,
    }


def contract(template: Path) -> str:
    """Each top-level function or class of the template with its docstring: what the grader calls."""
    source = template.read_text(encoding="utf-8")
    parts = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node):
            header = ast.get_source_segment(source, node).split(":\n", 1)[0] + ":"
            body = "\n".join("    " + line if line else "" for line in ast.get_docstring(node).splitlines())
            parts.append(f'{header}\n    """{body.strip()}\n    """')
    return "\n\n".join(parts)


def entries(template: Path) -> list[str]:
    return [n.name for n in ast.parse(template.read_text(encoding="utf-8")).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def setup_source(lang: str) -> str:
    return (f"{say('install', lang)}\nimport importlib.util\n\nif importlib.util.find_spec(\"drill\") is None:\n"
            f"    %pip install -q \"{PACKAGE}\"\n%load_ext drill\n")  # fmt: skip


def task_notebook(exercise: catalog.Exercise, lang: str) -> dict:
    from drill.views.whiteboard_view import TRACK_NAMES

    task = exercise.id
    flag = " --lang zh" if lang == "zh" else ""
    names = ", ".join(f"`{name}`" for name in entries(exercise.template))
    hints = "\n".join(f"<details><summary>{say('hint_n', lang, n=n)}</summary>\n\n{hint[lang]}\n\n</details>\n"
                      for n, hint in enumerate(exercise.hints, 1))  # fmt: skip
    cells = [
        _markdown(f"{task}-statement", f"# {exercise.title[lang]}\n\n"
                  f"{say('meta', lang, track=translated(TRACK_NAMES[exercise.track], lang), level=exercise.level, task=task)}\n\n"
                  f"{say('statement', lang, entries=names, task=task)}\n\n{say('contract', lang)}\n\n"
                  f"```python\n{contract(exercise.template)}\n```\n"),
        _markdown(f"{task}-setup-note", say("setup", lang) + "\n"),
        _code(f"{task}-setup", setup_source(lang)),
        _markdown(f"{task}-your-turn", say("your_turn", lang) + "\n"),
        _code(f"{task}-grade", f"%%drill {task}{flag}\n" + exercise.template.read_text(encoding="utf-8")),
        _markdown(f"{task}-hints", f"{say('hints', lang)}\n\n{hints}"),
        _markdown(f"{task}-hint-note", say("hint_cell", lang) + "\n"),
        _code(f"{task}-hint", f"%drill hint {task}{flag}\n"),
        _markdown(f"{task}-solution-note", say("solution_cell", lang) + "\n"),
        _code(f"{task}-solution", f"%drill solution {task}{flag}\n"),
    ]
    return _notebook(cells, lang)


def plan_notebooks(lang: str) -> list[tuple[str, dict]]:
    """(file name, notebook) for the index and every task, numbered in the catalog's order."""
    from drill.views.whiteboard_view import TRACK_NAMES

    exercises = list(catalog.load().values())
    width = len(str(len(exercises)))
    named = [(f"{n:0{width}d}-{e.id}.ipynb", e) for n, e in enumerate(exercises, 1)]
    lines, track = [], None
    for name, e in named:
        if e.track != track:
            track = e.track
            lines.append(f"\n## {translated(TRACK_NAMES[track], lang)}\n")
        lines.append(f"- [{e.title[lang]}]({name}) · {e.level} · `{e.id}`")
    flag = " --lang zh" if lang == "zh" else ""
    index = _notebook([
        _markdown("plan-intro", f"{say('plan_title', lang)}\n\n{say('plan_intro', lang)}\n" + "\n".join(lines) + "\n"),
        _code("plan-setup", setup_source(lang)),
        _code("plan-tasks", f"%drill tasks{flag}\n"),
        _code("plan-today", f"%drill today{flag}\n"),
    ], lang)  # fmt: skip
    return [(f"{0:0{width}d}-plan.ipynb", index)] + [(name, task_notebook(e, lang)) for name, e in named]


def write(notebook: dict, path: Path) -> None:
    """Write ``path``; an existing file is never overwritten (it may hold the user's work)."""
    if path.exists():
        raise DrillError("{path}: already exists; choose another -o or remove it (your work is never overwritten)", path=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(json.dumps(notebook, ensure_ascii=False, indent=1) + "\n")
    except OSError as exc:
        raise DrillError("{path}: cannot write the notebook: {why}", path=str(path), why=exc.strerror) from None


def write_plan(folder: Path, lang: str) -> tuple[list[Path], list[Path]]:
    """Write every plan notebook missing from ``folder``; (written, kept as they were)."""
    if folder.exists() and not folder.is_dir():
        raise DrillError("{path}: not a folder", path=str(folder))
    written, kept = [], []
    for name, notebook in plan_notebooks(lang):
        path = folder / name
        if path.exists():
            kept.append(path)
        else:
            write(notebook, path)
            written.append(path)
    return written, kept
