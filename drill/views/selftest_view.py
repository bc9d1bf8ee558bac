"""Rich rendering of ``drill selftest``: a progress bar, then the matrix of files against what they must get."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from drill.grade.kernel_env import HOW_TO_GET
from drill.grade.selftest import Row, Selftest
from drill.text.i18n import text
from drill.text.messages import Msg
from drill.views.console import err, out

TEXT = {
    "title": Msg("drill selftest · device {device}"),
    "task": Msg("task"),
    "file": Msg("file"),
    "expected": Msg("must get"),
    "got": Msg("got"),
    "agree": "[green]✓[/]",
    "disagree": "[red]✗[/]",
    "summary": Msg("solutions passing: {sol_ok}/{sol_n}; mutants named with exactly their code: {mut_ok}/{mut_n}"),
    "ok": Msg("[bold green]SELFTEST PASSED[/]: grading is right on this device"),
    "bad": Msg("[bold red]SELFTEST FAILED[/]: {n} file(s) graded differently from what they must get (✗ rows above); please report it"),
    "skipped": Msg("[yellow]skipped[/] {tasks}: Triton is not installed ({how})"),
    "grading": Msg("grading {file}"),
    "starting": Msg("starting the grader (import torch)"),
}


def _t(key: str, lang: str, **values) -> str:
    return text(TEXT[key], lang, **values)


@contextmanager
def progress(enabled: bool, lang: str = "en") -> Iterator[Callable[[Row, int], None]]:
    """Yield an ``on_row`` callback that advances a progress bar on stderr (a no-op when disabled)."""
    if not enabled:
        yield lambda row, total: None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True)
    with bar:
        task = bar.add_task(_t("starting", lang), total=None)

        def on_row(row: Row, total: int) -> None:
            bar.update(task, total=total, advance=1, description=_t("grading", lang, file=f"{row.case.task}/{row.case.name}"))

        yield on_row


def print_selftest(result: Selftest, as_json: bool, lang: str = "en") -> None:
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table(title=_t("title", lang, device=result.device), title_justify="left")
    table.add_column("", no_wrap=True)
    for key in ("task", "file", "expected", "got"):
        table.add_column(_t(key, lang), overflow="fold")
    for row in result.rows:
        mark = _t("agree" if row.ok else "disagree", lang)
        got = escape(row.got) if row.ok else f"[red]{escape(row.got)}[/]"
        table.add_row(mark, row.case.task, escape(row.case.name), escape(row.case.expected or "pass"), got)
    out.print(table)
    (sol_ok, sol_n), (mut_ok, mut_n) = result.counts("solution"), result.counts("mutant")
    out.print(_t("summary", lang, sol_ok=sol_ok, sol_n=sol_n, mut_ok=mut_ok, mut_n=mut_n))
    bad = sum(not r.ok for r in result.rows)
    if result.skipped:
        out.print(_t("skipped", lang, tasks=", ".join(result.skipped), how=escape(HOW_TO_GET)))
    out.print(_t("bad", lang, n=bad) if bad else _t("ok", lang))
