"""The documented diagnosis codes: what each classic mistake is, how to fix it, and the bank
questions on the same concept, in English and Chinese.

Codes shared by several tasks are in ``drill/grade/checks/codes.yaml``; a task's own codes sit in
its folder as ``drill/grade/tasks/<task>/codes.yaml``, so adding a task adds its codes there and
touches nothing else. Outside drill.grade, torch-free and read lazily: ``drill review`` and
``drill stats`` map codes to questions with it without loading the grader. The YAML is parsed once
per change of any codes file (drill.compiled keeps the documents), not on every start.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

from drill import compiled
from drill.errors import DrillError

GRADE = Path(__file__).resolve().parent / "grade"  # read as files: importing drill.grade is not needed to name a code
FORMAT_VERSION = 1


class Code(NamedTuple):
    message: str
    fix: str
    message_zh: str
    fix_zh: str
    questions: tuple[str, ...] = ()  # bank ids made due in drill review after a failing run with this code


def files() -> list[Path]:
    return [GRADE / "checks" / "codes.yaml", *sorted((GRADE / "tasks").glob("*/codes.yaml"))]


@cache
def all_codes() -> dict[str, Code]:
    """Every code by name, from every codes file; a code defined twice or a malformed entry names its file."""
    found: dict[str, Code] = {}
    for path, data in compiled.yaml_documents("codes", GRADE, files()):
        data = data or {}
        if data.get("format_version") != FORMAT_VERSION:
            raise DrillError("{path}: format_version must be {version}", path=str(path), version=FORMAT_VERSION)
        for name, entry in (data.get("codes") or {}).items():
            if name in found:
                raise DrillError("{path}: code {name!r} is defined twice", path=str(path), name=name)
            try:
                found[name] = Code(
                    entry["en"], entry["fix_en"], entry["zh"], entry["fix_zh"], tuple(entry.get("questions") or ())
                )
            except (KeyError, TypeError) as exc:
                raise DrillError("{path}: code {name!r}: missing or malformed {what}", path=str(path), name=name, what=str(exc)) from None
    return found


def explain(codes) -> list:
    """One Diagnosis per distinct code, in order."""
    from drill.grade.report import Diagnosis

    known = all_codes()
    return [Diagnosis(code, *known[code][:4]) for code in dict.fromkeys(codes)]
