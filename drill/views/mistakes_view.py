"""``drill mistakes``: the wrong answers and failed tasks, each with when it is due again and the command that redoes it."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from rich.markup import escape
from rich.table import Table

from drill.practice.mistakes import Notebook
from drill.text.intervals import interval_text
from drill.views.console import out

TEXT = {
    "questions": ("Wrong answers ({n})", "答错的题（{n}）"),
    "tasks": ("Failed tasks ({n})", "未通过的白板题（{n}）"),
    "question": ("question", "题目"), "topic": ("topic", "主题"), "level": ("level", "级别"),
    "answer": ("your answer", "你的答案"), "when": ("when", "时间"), "due": ("next due", "下次复习"),
    "task": ("task", "题目"), "codes": ("diagnosis", "诊断"), "runs": ("failing runs", "失败次数"),
    "now": ("now", "现在"), "in": ("in {left}", "{left}后"), "not_scheduled": ("-", "-"),
    "none": ("No mistakes to redo: every question's latest answer was right and every task's latest run passed.",
             "没有需要重做的错题：每道题最近一次都答对了，每道白板题最近一次都通过了。"),
    "redo_questions": ("Redo them: drill quiz --wrong", "重做这些题：drill quiz --wrong"),
    "redo_task": ("Redo a task: drill whiteboard {task}", "重做白板题：drill whiteboard {task}"),
    "more": ("… and {n} more (the latest are shown): narrow with --topic or --since, or see all with --json",
             "……还有 {n} 条（上面是最近的）：用 --topic 或 --since 缩小范围，或用 --json 查看全部"),
}
ANSWER_WIDTH = 24
SHOWN = 30  # rows per table: a long list is read by narrowing it, and rich lays out hundreds of rows slowly


def _t(key: str, lang: str, **values: object) -> str:
    en, zh = TEXT[key]
    return (zh if lang == "zh" else en).format(**values)


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
