"""The IPython extension: ``%%drill TASK`` grades a cell; ``%drill hint|solution TASK``, ``%drill tasks``, ``%drill today``.

Loaded by ``%load_ext drill`` (drill.load_ipython_extension). In a notebook the grade report is
HTML (with a plain-text copy for text-only front ends); in a terminal IPython it is the CLI's
own rich report. Bad input is an IPython UsageError: one line, no traceback.
"""

from __future__ import annotations

import argparse
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from drill.errors import DrillError
from drill.notebook.practice import Practice
from drill.text.i18n import text
from drill.text.messages import Msg

WORDS = {
    "usage": Msg("usage: %%drill TASK (or %%drill grade TASK) on a cell's first line grades the cell; "
                 "%drill hint TASK · %drill solution TASK · %drill tasks · %drill today; options: --lang en|zh, "
                 "and for a grade --trace --device auto|cpu|cuda --seed N --timeout S --allow-builtins --memory-limit 4G"),
    "cell_only": Msg("%drill grade TASK goes on a cell's first line as %%drill grade TASK, above your code"),
    "one_task": Msg("%drill {what} takes one task id, e.g. %drill {what} sdpa"),
    "solution": Msg("solution · {task}"),
    "locked": Msg("The solution opens after a pass of {task}: run your %%drill {task} cell until it passes."),
}
LINE_COMMANDS = ("hint", "solution", "tasks", "today")


def say(key: str, lang: str, **values: object) -> str:
    return text(WORDS[key], lang, **values)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"%drill: {message}")


def _parser() -> _Parser:
    parser = _Parser(prog="%drill", add_help=False)
    parser.add_argument("words", nargs="*")
    parser.add_argument("--lang", choices=("en", "zh"))
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--allow-builtins", action="store_true")
    parser.add_argument("--memory-limit")
    return parser


@magics_class
class DrillMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.practice = Practice()

    @line_cell_magic
    def drill(self, line: str, cell: str | None = None) -> None:
        try:
            args = _parser().parse_args(shlex.split(line))
        except ValueError as exc:  # an unclosed quote
            raise UsageError(f"%drill: {exc}") from None
        from drill.config import resolve

        lang = resolve(args.lang)
        try:
            if cell is not None:
                self._grade(args, cell, lang)
            else:
                self._line(args, lang)
        except DrillError as exc:
            raise UsageError(str(exc)) from None

    @property
    def _in_notebook(self) -> bool:
        return getattr(self.shell, "kernel", None) is not None  # ipykernel's shell; a terminal IPython has none

    def _show(self, html: str, text: str) -> None:
        if self._in_notebook:
            from IPython.display import display

            display({"text/html": html, "text/plain": text}, raw=True)
        else:
            print(text)

    def _grade(self, args, cell: str, lang: str) -> None:
        words = args.words[1:] if args.words[:1] == ["grade"] else args.words
        if len(words) != 1:
            raise UsageError(say("usage", lang))
        from drill.history import store
        from drill.grade.run import parse_size

        report = self.practice.grade(store.connect(), words[0], cell, device=args.device, seed=args.seed, timeout=args.timeout,
                                     allow_builtins=args.allow_builtins, trace=args.trace,
                                     memory_limit=parse_size(args.memory_limit) if args.memory_limit else None)  # fmt: skip
        if self._in_notebook:
            from drill.notebook.render import report_html, report_text

            self._show(report_html(report, lang), report_text(report, lang))
        else:
            from drill.views import grade_view

            grade_view.print_report(report, False, lang)

    def _line(self, args, lang: str) -> None:
        what, rest = (args.words[0], args.words[1:]) if args.words else (None, [])
        if what == "grade":
            raise UsageError(say("cell_only", lang))
        if what not in LINE_COMMANDS:
            raise UsageError(say("usage", lang))
        if what in ("hint", "solution") and len(rest) != 1:
            raise UsageError(say("one_task", lang, what=what))
        from drill.history import store

        conn = store.connect()
        if what == "hint":
            self._hint(rest[0], lang)
        elif what == "solution":
            self._solution(conn, rest[0], lang)
        elif what == "tasks":
            from drill.whiteboard import catalog

            self._tasks(catalog.statuses(conn), lang)
        else:
            from drill.practice import dashboard
            from drill.bank.load import load_bank
            from drill.views import dashboard_view
            from drill.whiteboard import catalog

            tasks = [(s.exercise.id, s.state) for s in catalog.statuses(conn)]
            dashboard_view.print_plan(dashboard.plan(conn, set(load_bank(None).questions), tasks), lang, False)

    def _tasks(self, statuses: list, lang: str) -> None:
        if self._in_notebook:
            from drill.notebook.render import tasks_html

            self._show(tasks_html(statuses, lang), "\n".join(f"{s.exercise.id}: {s.state}" for s in statuses))
        else:
            from drill.views import whiteboard_view

            whiteboard_view.print_tasks(statuses, False, lang)

    def _hint(self, task: str, lang: str) -> None:
        from drill.notebook.render import note_html
        from drill.views.whiteboard_view import say as wb_say

        hint = self.practice.hint(task, lang)
        if hint is None:
            from drill.whiteboard import catalog

            text = wb_say("no_more", lang, total=len(catalog.get(task).hints))
            self._show(note_html("", text), text)
            return
        number, total, text = hint
        title = wb_say("hint", lang, number=number, total=total)
        self._show(note_html(title, text), f"{title}  {text}")

    def _solution(self, conn, task: str, lang: str) -> None:
        from drill.notebook.render import code_html, note_html

        source = self.practice.solution(conn, task)
        if source is None:
            text = say("locked", lang, task=task)
            self._show(note_html("", text), text)
            return
        title = say("solution", lang, task=task)
        self._show(code_html(title, source), f"{title}\n{source}")


def load(ipython) -> None:
    ipython.register_magics(DrillMagics)
