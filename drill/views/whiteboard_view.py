"""Rich rendering of whiteboard sessions and ``drill tasks``."""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from drill.grade.report import FAILING, Report
from drill.views.console import out
from drill.whiteboard.catalog import Exercise, Status

MAX_FAILURES = 3
STATES = {"untried": "[dim]untried[/]", "failed": "[red]failed[/]", "passed": "[green]passed[/]"}


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


class SessionView:
    """What a watch-mode session prints: one compact block per save."""

    def __init__(self, lang: str):
        self.lang = lang

    def starting(self, exercise: Exercise, path: Path, resumed: bool, minutes: int) -> None:
        title = exercise.title.get(self.lang, exercise.title["en"])
        out.rule(f"[bold]{escape(title)}[/] · {exercise.id} · {exercise.level}")
        action = "Resuming your file" if resumed else "Template written to"
        out.print(f"{action} [bold]{escape(str(path))}[/]; {minutes} min on the clock.")
        out.print("Save the file to re-grade.  [bold]h[/] hint  ·  [bold]r[/] reset the template  ·  [bold]q[/] quit")
        out.print("[dim]starting the grader (imports torch once)...[/]")

    def graded(self, report: Report, left_s: float) -> None:
        failing = [c for c in report.checks if c.status in FAILING]
        total = len(report.checks)
        if report.passed:
            out.print(f"[bold green]PASSED[/] all {total} checks  ({report.duration_s:.2f} s)")
            return
        out.print(f"[bold red]FAILED[/] {len(failing)}/{total} checks  ({report.duration_s:.2f} s)  ⏱ {clock(left_s)} left")
        for d in report.diagnosis:
            message, fix = d.text(self.lang)
            out.print(f"  [bold red]{d.code}[/] {escape(message)}\n    [green]fix:[/] {escape(fix)}")
        for check in failing[:MAX_FAILURES]:
            out.print(f"  [red]✗[/] {check.id}: {escape(check.message)}")
        if len(failing) > MAX_FAILURES:
            out.print(f"  [dim]... and {len(failing) - MAX_FAILURES} more (drill grade FILE shows all)[/]")

    def hint(self, number: int, text: str) -> None:
        out.print(f"[yellow]hint {number}/3[/] {escape(text)}")

    def reset(self, path: Path) -> None:
        out.print(f"[yellow]reset[/] {escape(str(path))} is the template again")


def print_outcome(outcome, streak_line: str) -> None:
    if outcome.passed:
        out.print(f"[bold green]Solved {outcome.task} in {clock(outcome.seconds)}[/] · saved to your history")
    else:
        why = "Time is up" if outcome.stopped == "time" else "Stopped"
        out.print(f"{why} after {clock(outcome.seconds)}; your file is kept, run the same command to resume.")
    if streak_line:
        out.print(f"[dim]{escape(streak_line)}[/]")


TRACK_NAMES = {
    "attention": ("attention", "注意力"),
    "positions": ("positions", "位置编码"),
    "inference": ("inference", "推理"),
    "building blocks": ("building blocks", "基础模块"),
    "training": ("training", "训练"),
    "alignment": ("alignment", "对齐"),
    "decoding": ("decoding", "解码"),
    "tokenization": ("tokenization", "分词"),
}


def print_tasks(statuses: list[Status], as_json: bool, lang: str) -> None:
    if as_json:
        print(json.dumps([s.to_json() for s in statuses], ensure_ascii=False, indent=2))
        return
    table = Table(title="Whiteboard tasks", title_justify="left")
    for name in ("track", "task", "level", "title", "status", "best"):
        table.add_column(name, justify="right" if name == "best" else "left")
    track = None
    for s in statuses:  # the catalog's order: by track, then by level
        if track is not None and s.exercise.track != track:
            table.add_section()
        shown = TRACK_NAMES[s.exercise.track][lang == "zh"] if s.exercise.track != track else ""
        track = s.exercise.track
        best = "-" if s.best_seconds is None else clock(s.best_seconds)
        table.add_row(shown, s.exercise.id, s.exercise.level, s.exercise.title.get(lang, s.exercise.title["en"]), STATES[s.state], best)
    out.print(table)
    out.print("[dim]Start one with: drill whiteboard TASK[/]")
