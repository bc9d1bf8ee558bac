"""Rich rendering of the streak, its heatmap calendar and ``drill stats``."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from drill import heatmap, streak
from drill.mistakes import questions_for
from drill.stats import Stats, drill_command
from drill.views.console import out

SHADES = ("grey23", "green4", "green3", "green1", "bright_green")
FROZEN = "cyan"
WEEKDAYS = ("Mon", "", "Wed", "", "Fri", "", "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def print_streak(rep: streak.Report, as_json: bool) -> None:
    s = rep.streak
    if as_json:
        print(json.dumps(rep.to_json(), indent=2))
        return
    if not rep.settings.enabled:
        out.print("Streaks are off. Turn them on with: drill config set streaks on")
        return
    alive = " [green](alive)[/]" if s.alive else ""
    out.print(f"[bold]Current streak[/]  {_plural(s.current, 'day')}{alive}")
    out.print(f"[bold]Longest streak[/]  {_plural(s.longest, 'day')}")
    out.print(f"[bold]Practice days[/]   {s.practice_days}")
    out.print(f"[bold]Today[/]           {streak.progress(rep)} (goal: {rep.settings.daily_goal} questions or 1 whiteboard task)")
    out.print(f"[bold]Freezes[/]         {s.freezes} of {streak.MAX_FREEZES} held, {len(s.frozen)} used")
    out.print()
    print_heatmap(rep)


def print_heatmap(rep: streak.Report, weeks: int = heatmap.WEEKS) -> None:
    """The calendar: cells two columns wide when the terminal allows it, else one."""
    width = 2 if out.width >= 4 + 2 * weeks else 1
    weeks = min(weeks, max(1, (out.width - 4) // width))
    rows = heatmap.grid(rep.days, set(rep.streak.frozen), rep.today, rep.settings.daily_goal, weeks)
    labels = Text(" " * 4)
    for col, name in heatmap.month_labels(rep.today, weeks):
        pad = 4 + col * width - labels.cell_len
        if pad >= 0:
            labels.append(" " * pad + name)
    out.print(labels)
    for weekday, row in zip(WEEKDAYS, rows):
        line = Text(f"{weekday:<4}")
        for cell in row:
            line.append(_glyph(cell).ljust(width), style=_style(cell))
        out.print(line, no_wrap=True, overflow="crop")
    legend = Text("    less ")
    legend.append("·", style=SHADES[0])
    for shade in SHADES[1:]:
        legend.append("■", style=shade)
    legend.append(" more   ")
    legend.append("◆", style="bold " + SHADES[2])
    legend.append(" today   ")
    legend.append("*", style=FROZEN)
    legend.append(" frozen")
    out.print(legend)


def _glyph(cell: heatmap.Cell | None) -> str:
    if cell is None:
        return " "
    return "◆" if cell.today else "*" if cell.frozen else "■" if cell.level else "·"


def _style(cell: heatmap.Cell | None) -> str:
    if cell is None:
        return ""
    if cell.frozen:
        return FROZEN
    return ("bold " if cell.today else "") + SHADES[cell.level]


def print_stats(stats: Stats, as_json: bool) -> None:
    if as_json:
        print(json.dumps(stats.to_json(), ensure_ascii=False, indent=2))
        return
    rep = stats.report
    if rep.settings.enabled:
        s = rep.streak
        out.print(f"[bold]Streak[/] {_plural(s.current, 'day')} (longest {s.longest}, {_plural(s.practice_days, 'practice day')})"
                  f" · today {streak.progress(rep)}")
    out.print(f"[bold]Attempts[/] {stats.attempts} · accuracy {stats.accuracy:.0%}")
    if not stats.attempts:
        out.print("No answers yet. Start with: drill quiz")
    else:
        out.print(_accuracy_table("level", stats.by_level, {t.level: t for t in stats.timing}))
        out.print(_accuracy_table("topic", stats.by_topic, {}))
        if stats.weakest:
            table = Table(title="Weakest topics", title_justify="left")
            for name in ("topic", "accuracy", "attempts", "drill it"):
                table.add_column(name, justify="right" if name in ("accuracy", "attempts") else "left")
            for a in stats.weakest:
                table.add_row(a.key, f"{a.accuracy:.0%}", str(a.attempts), drill_command(a.key))
            out.print(table)
    if stats.whiteboard:
        table = Table(title="Whiteboard", title_justify="left")
        for name in ("task", "runs", "passed", "best time"):
            table.add_column(name, justify="left" if name == "task" else "right")
        for w in stats.whiteboard:
            best = "-" if w.best_seconds is None else f"{w.best_seconds:.0f}s"
            table.add_row(w.task, str(w.runs), str(w.passed), best)
        out.print(table)
    if stats.mistakes:
        table = Table(title="Most frequent mistakes", title_justify="left")
        for name in ("diagnosis", "runs", "now due in drill review"):
            table.add_column(name, justify="right" if name == "runs" else "left")
        for code, n in stats.mistakes:
            table.add_row(code, str(n), ", ".join(questions_for([code])) or "-")
        out.print(table)


def _accuracy_table(by: str, rows: list, timing: dict) -> Table:
    table = Table(title=f"Accuracy by {by}", title_justify="left")
    table.add_column(by)
    for name in ("attempts", "accuracy", *(("avg time", "avg limit", "timed out") if timing else ())):
        table.add_column(name, justify="right")
    for a in rows:
        cells = [a.key, str(a.attempts), f"{a.accuracy:.0%}"]
        t = timing.get(a.key)
        if t:
            limit = "-" if t.avg_limit is None else f"{t.avg_limit:.0f}s"
            cells += [f"{t.avg_seconds:.0f}s", limit, str(t.timed_out)]
        table.add_row(*cells)
    return table
