"""Rich rendering of ``drill grade``: a progress bar while checks run, then the report."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from drill.grade.report import Report
from drill.text.i18n import text
from drill.text.messages import Msg, translated
from drill.views import trace_view
from drill.views.console import err, marked, out

MARKS = {
    "pass": Msg("[green]✓ pass[/]"),
    "fail": Msg("[red]✗ fail[/]"),
    "error": Msg("[red]✗ error[/]"),
    "warn": Msg("[yellow]! warn[/]"),
    "skip": Msg("[dim]- skip[/]"),
}
STATUS = {"pass": Msg("pass"), "fail": Msg("fail"), "error": Msg("error"), "warn": Msg("warn"), "skip": Msg("skip")}
CATEGORIES = {"shape": Msg("shape"), "mask-leak": Msg("mask-leak"), "numerical": Msg("numerical"), "stability": Msg("stability"),
              "gradient": Msg("gradient"), "rules": Msg("rules"), "robustness": Msg("robustness")}  # fmt: skip
WORDS = {  # the report's frame; check ids stay as the grader wrote them, the evidence comes in both languages
    "title": Msg("drill grade · task {task} · device {device}"),
    "columns": (Msg("status"), Msg("check"), Msg("category"), Msg("evidence")),
    "diagnosis": Msg("diagnosis"),
    "fix": Msg("fix:"),
    "possibly": Msg("possibly {code}"),
    "no_code": Msg("No single classic mistake explains the failures; read the evidence above."),
    "passed": Msg("PASSED"),
    "starting": Msg("starting the grader (import torch)"),
    "grading": Msg("grading {task} on {device}"),
    "checked": Msg("checked {check}"),
    "failed": Msg("FAILED"),
    "seed": Msg(", seed {seed}"),
}


def category(name: str, lang: str) -> str:
    return translated(CATEGORIES.get(name, name), lang)


def counts(checks, lang: str) -> str:
    """``3 pass, 1 fail`` (通过 3，失败 1): how many checks ended in each status."""
    shown = [Msg("{n} {status}", n=n, status=STATUS[s]) for s in MARKS if (n := sum(c.status == s for c in checks))]
    return translated(Msg.seq(shown, ", "), lang)


@contextmanager
def progress(enabled: bool, lang: str = "en") -> Iterator[Callable[[dict], None]]:
    """Yield an ``on_event`` callback that advances a progress bar on stderr: a no-op when disabled or when stderr
    is no terminal (a transient bar there would only leave an empty line)."""
    if not enabled or not err.is_terminal:
        yield lambda event: None
        return
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
    )
    with bar:
        task = bar.add_task(text(WORDS["starting"], lang), total=None)

        def on_event(event: dict) -> None:
            if event.get("event") == "start":
                bar.update(task, total=event["total"], description=text(WORDS["grading"], lang, task=event["task"], device=event["device"]))
            elif event.get("event") == "check":
                bar.update(task, advance=1, description=text(WORDS["checked"], lang, check=event["check"]["id"]))

        yield on_event


def print_report(report: Report, as_json: bool, lang: str = "en") -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table(title=text(WORDS["title"], lang, task=report.task, device=report.device), title_justify="left")
    status, check_col, category_col, evidence = (translated(name, lang) for name in WORDS["columns"])
    table.add_column(status, no_wrap=True)
    table.add_column(check_col, no_wrap=True)
    table.add_column(category_col, style="dim", no_wrap=True)
    table.add_column(evidence)
    for check in report.checks:
        table.add_row(translated(MARKS.get(check.status, check.status), lang), check.id, category(check.category, lang), marked(check.text(lang), out))
    out.print(table)
    if report.trace is not None:
        for line in trace_view.trace_lines(report.trace, lang):
            out.print(line, overflow="ellipsis", no_wrap=True)
        if report.first_divergence:
            out.print(f"[bold red]{marked(trace_view.where(report.first_divergence, lang), out)}[/]")
    for picture in report.pictures:
        for line in trace_view.picture_lines(picture, lang):
            out.print(line, no_wrap=True)
    fix = text(WORDS["fix"], lang)
    if report.diagnosis or report.candidates:
        lines = [f"[bold]{marked(trace_view.where(report.first_divergence, lang), out)}[/]"] if report.first_divergence else []
        for d in report.diagnosis:
            message, how = d.text(lang)
            lines.append(f"[bold red]{d.code}[/]  {marked(message, out)}\n   [green]{fix}[/] {marked(how, out)}")
        for d in report.candidates:  # not confirmed by the outputs: never stored or counted
            message, how = d.text(lang)
            lines.append(f"[yellow]{text(WORDS['possibly'], lang, code=d.code)}[/]  {marked(message, out)}\n   [green]{fix}[/] {marked(how, out)}")
        panel = Panel("\n".join(lines), title=text(WORDS["diagnosis"], lang), title_align="left", border_style="red")
        out.print(panel, soft_wrap=False)  # piped output does not wrap lines, but a panel's must: else they are cut
    elif not report.passed:
        if report.first_divergence and report.trace is None:
            out.print(f"[bold red]{marked(trace_view.where(report.first_divergence, lang), out)}[/]")
        out.print(f"[dim]{text(WORDS['no_code'], lang)}[/]")
    verdict = f"[bold green]{text(WORDS['passed'], lang)}[/]" if report.passed else f"[bold red]{text(WORDS['failed'], lang)}[/]"
    seed = "" if report.seed is None else text(WORDS["seed"], lang, seed=report.seed)
    out.print(f"{verdict}  {counts(report.checks, lang)}  ({report.duration_s:.1f} s{seed})")
