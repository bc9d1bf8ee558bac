"""``drill mistakes``: the wrong answers and failed tasks, each with when it is due again and the command that redoes it."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from rich.markup import escape
from rich.table import Table

from drill.practice.mistakes import Notebook
from drill.text.i18n import text
from drill.text.intervals import interval_text
from drill.text.messages import Msg
from drill.views.console import out

TEXT = {
    "questions": Msg("Wrong answers ({n})"),
    "tasks": Msg("Failed tasks ({n})"),
    "question": Msg("question"), "topic": Msg("topic"), "level": Msg("level"),
    "answer": Msg("your answer"), "when": Msg("when"), "due": Msg("next due"),
    "task": Msg("task"), "codes": Msg("diagnosis"), "runs": Msg("failing runs"),
    "now": Msg("now"), "in": Msg("in {left}"), "not_scheduled": "-",
    "none": Msg("No mistakes to redo: every question's latest answer was right and every task's latest run passed."),
    "redo_questions": Msg("Redo them: drill quiz --wrong"),
    "redo_task": Msg("Redo a task: drill whiteboard {task}"),
    "more": Msg("… and {n} more (the latest are shown): narrow with --topic or --since, or see all with --json"),
}  # fmt: skip
ANSWER_WIDTH = 24
SHOWN = 30  # rows per table: a long list is read by narrowing it, and rich lays out hundreds of rows slowly


def _t(key: str, lang: str, **values: object) -> str:
    return text(TEXT[key], lang, **values)


def _due(due: datetime | None, now: datetime, lang: str) -> str:
    if due is None:
        return _t("not_scheduled", lang)
    return _t("now", lang) if due <= now else _t("in", lang, left=interval_text(due - now, lang))


def _short(answer: str) -> str:
    line = " ".join(answer.split())
    return line if len(line) <= ANSWER_WIDTH else line[: ANSWER_WIDTH - 1] + "…"


def _stamp(due: datetime | None) -> str | None:
    return due.astimezone(timezone.utc).isoformat(timespec="seconds") if due else None


def to_json(book: Notebook) -> dict:
    return {
        "questions": [
            {"id": w.question_id, "level": w.level, "topic": w.topic, "type": w.type, "answer": w.answer,
             "answered_at": w.answered_at, "due": _stamp(w.due)}
            for w in book.questions
        ],
        "tasks": [
            {"task": f.task, "codes": f.codes, "failing_runs": f.failing_runs, "run_at": f.run_at, "due": _stamp(f.due)}
            for f in book.tasks
        ],
    }  # fmt: skip


def print_mistakes(book: Notebook, lang: str, as_json: bool, now: datetime | None = None) -> None:
    if as_json:
        print(json.dumps(to_json(book), ensure_ascii=False, indent=2))
        return
    now = now or datetime.now(timezone.utc)
    if not book.questions and not book.tasks:
        out.print(_t("none", lang), markup=False)
        return
    if book.questions:
        table = Table(title=_t("questions", lang, n=len(book.questions)), title_justify="left")
        for name in ("question", "topic", "level", "answer", "when", "due"):
            table.add_column(_t(name, lang), overflow="fold" if name == "question" else "ellipsis")
        for w in book.questions[:SHOWN]:
            table.add_row(w.question_id, w.topic, w.level, escape(_short(w.answer)), w.local_time[:10], _due(w.due, now, lang))
        out.print(table)
        _more(len(book.questions), lang)
        out.print(_t("redo_questions", lang), markup=False)
    if book.tasks:
        table = Table(title=_t("tasks", lang, n=len(book.tasks)), title_justify="left")
        for name in ("task", "codes", "runs", "when", "due"):
            table.add_column(_t(name, lang), justify="right" if name == "runs" else "left")
        for f in book.tasks[:SHOWN]:
            table.add_row(f.task, ", ".join(f.codes) or "-", str(f.failing_runs), f.local_time[:10], _due(f.due, now, lang))
        out.print(table)
        _more(len(book.tasks), lang)
        out.print(_t("redo_task", lang, task=book.tasks[0].task), markup=False)


def _more(total: int, lang: str) -> None:
    if total > SHOWN:
        out.print(_t("more", lang, n=total - SHOWN), markup=False)
