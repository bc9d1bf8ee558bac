"""Rich rendering of ``drill grade``: a progress bar while checks run, then the report."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from drill.grade.report import Report
from drill.views.console import err, out

MARKS = {
    "pass": "[green]✓ pass[/]",
    "fail": "[red]✗ fail[/]",
    "error": "[red]✗ error[/]",
    "warn": "[yellow]! warn[/]",
    "skip": "[dim]- skip[/]",
}


@contextmanager
def progress(enabled: bool) -> Iterator[Callable[[dict], None]]:
    """Yield an ``on_event`` callback that advances a progress bar on stderr (a no-op when disabled)."""
    if not enabled:
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
        task = bar.add_task("starting the grader (import torch)", total=None)

        def on_event(event: dict) -> None:
            if event.get("event") == "start":
                bar.update(task, total=event["total"], description=f"grading {event['task']} on {event['device']}")
            elif event.get("event") == "check":
                bar.update(task, advance=1, description=f"checked {event['check']['id']}")

        yield on_event


def print_report(report: Report, as_json: bool, lang: str = "en") -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table(title=f"drill grade · task {report.task} · device {report.device}", title_justify="left")
    table.add_column("status", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("category", style="dim", no_wrap=True)
    table.add_column("evidence")
    for check in report.checks:
        table.add_row(MARKS.get(check.status, check.status), check.id, check.category, escape(check.message))
    out.print(table)
    if report.diagnosis:
        lines = []
        for d in report.diagnosis:
            message, fix = d.text(lang)
            lines.append(f"[bold red]{d.code}[/]  {escape(message)}\n   [green]fix:[/] {escape(fix)}")
        out.print(Panel("\n".join(lines), title="diagnosis", title_align="left", border_style="red"))
    elif not report.passed:
        out.print("[dim]No single classic mistake explains the failures; read the evidence above.[/]")
    counts = {s: sum(c.status == s for c in report.checks) for s in MARKS}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    verdict = "[bold green]PASSED[/]" if report.passed else "[bold red]FAILED[/]"
    out.print(f"{verdict}  {summary}  ({report.duration_s:.1f} s)")
