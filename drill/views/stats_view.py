"""Rich rendering of the streak, its heatmap calendar and ``drill stats``."""

from __future__ import annotations

import json
from math import ceil

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from drill.history import heatmap, streak
from drill.practice.mistakes import questions_for
from drill.history.stats import Stats, drill_command
from drill.text.i18n import plural, text
from drill.text.messages import Msg, translated
from drill.views.console import out

SHADES = ("grey23", "green4", "green3", "green1", "bright_green")
FROZEN = "cyan"
MONTHS = {"Jan": Msg("Jan"), "Feb": Msg("Feb"), "Mar": Msg("Mar"), "Apr": Msg("Apr"), "May": Msg("May"), "Jun": Msg("Jun"),
          "Jul": Msg("Jul"), "Aug": Msg("Aug"), "Sep": Msg("Sep"), "Oct": Msg("Oct"), "Nov": Msg("Nov"), "Dec": Msg("Dec")}  # fmt: skip
WEEKDAYS = (Msg("Mon"), "", Msg("Wed"), "", Msg("Fri"), "", "")

WORDS = {
    "off": Msg("Streaks are off. Turn them on with: drill config set streaks on"),
    "alive": Msg("(alive)"),
    "current": Msg("Current streak"),
    "longest": Msg("Longest streak"),
    "practice_days": Msg("Practice days"),
    "today": Msg("Today"),
    "goal": Msg("goal: {goal} questions or 1 whiteboard task"),
    "today_value": Msg("{progress} ({goal})"),
    "freezes": Msg("Freezes"),
    "freezes_held": Msg("{held} of {max} held, {used} used"),
    "days": (Msg("{n} day"), Msg("{n} days")),
    "streak_line": (Msg("[bold]Streak[/] {days} (longest {longest}, {practice} practice day) · today {progress}"),
                    Msg("[bold]Streak[/] {days} (longest {longest}, {practice} practice days) · today {progress}")),
    "attempts_line": Msg("[bold]Attempts[/] {n} · accuracy {acc}"),
    "no_answers": Msg("No answers yet. Start with: drill quiz"),
    "weakest": Msg("Weakest topics"),
    "whiteboard": Msg("Whiteboard"),
    "mistakes": Msg("Most frequent mistakes"),
    "by_level": Msg("Accuracy by level"),
    "by_topic": Msg("Accuracy by topic"),
    "progress": Msg("Week by week (last {n} weeks, oldest first)"),
    "less": Msg("less"), "more": Msg("more"), "today_mark": Msg("today"), "frozen": Msg("frozen"),
}  # fmt: skip
COLUMNS = {
    "level": Msg("level"), "topic": Msg("topic"), "attempts": Msg("attempts"), "accuracy": Msg("accuracy"),
    "avg time": Msg("avg time"), "avg limit": Msg("avg limit"), "timed out": Msg("timed out"),
    "drill it": Msg("drill it"), "task": Msg("task"), "runs": Msg("runs"), "passed": Msg("passed"),
    "best time": Msg("best time"), "answers per week": Msg("answers per week"),
    "accuracy per week": Msg("accuracy per week"), "first → last": Msg("first → last"), "diagnosis": Msg("diagnosis"),
    "now due in drill review": Msg("now due in drill review"),
}  # fmt: skip


def _w(key: str, lang: str, *counts: int, **values) -> str:
    return text(plural(WORDS[key], *counts), lang, **values)


def _col(name: str, lang: str) -> str:
    return translated(COLUMNS[name], lang)


def _days(n: int, lang: str) -> str:
    return _w("days", lang, n, n=n)


def print_streak(rep: streak.Report, as_json: bool, lang: str = "en") -> None:
    s = rep.streak
    if as_json:
        print(json.dumps(rep.to_json(), indent=2))
        return
    if not rep.settings.enabled:
        out.print(_w("off", lang))
        return
    alive = f" [green]{_w('alive', lang)}[/]" if s.alive else ""
    label = {key: _w(key, lang) + " " * (16 - cell_len(_w(key, lang))) for key in ("current", "longest", "practice_days", "today", "freezes")}
    out.print(f"[bold]{label['current']}[/]{_days(s.current, lang)}{alive}")
    out.print(f"[bold]{label['longest']}[/]{_days(s.longest, lang)}")
    out.print(f"[bold]{label['practice_days']}[/]{s.practice_days}")
    goal = _w("goal", lang, goal=rep.settings.daily_goal)
    out.print(f"[bold]{label['today']}[/]{_w('today_value', lang, progress=streak.progress(rep), goal=goal)}")
    out.print(f"[bold]{label['freezes']}[/]{_w('freezes_held', lang, held=s.freezes, max=streak.MAX_FREEZES, used=len(s.frozen))}")
    out.print()
    print_heatmap(rep, lang=lang)


def print_heatmap(rep: streak.Report, weeks: int = heatmap.WEEKS, lang: str = "en") -> None:
    """The calendar: cells two columns wide when the terminal allows it, else one."""
    width = 2 if out.width >= 4 + 2 * weeks else 1
    weeks = min(weeks, max(1, (out.width - 4) // width))
    rows = heatmap.grid(rep.days, set(rep.streak.frozen), rep.today, rep.settings.daily_goal, weeks)
    labels = Text(" " * 4)
    for col, name in heatmap.month_labels(rep.today, weeks):
        pad = 4 + col * width - labels.cell_len
        if pad >= 0:
            labels.append(" " * pad + translated(MONTHS.get(name, name), lang))
    out.print(labels)
    for weekday, row in zip(WEEKDAYS, rows):
        line = Text(f"{translated(weekday, lang):<4}")
        for cell in row:
            line.append(_glyph(cell).ljust(width), style=_style(cell))
        out.print(line, no_wrap=True, overflow="crop")
    legend = Text(f"    {_w('less', lang)} ")
    legend.append("·", style=SHADES[0])
    for shade in SHADES[1:]:
        legend.append("■", style=shade)
    legend.append(f" {_w('more', lang)}   ")
    legend.append("◆", style="bold " + SHADES[2])
    legend.append(f" {_w('today_mark', lang)}   ")
    legend.append("*", style=FROZEN)
    legend.append(f" {_w('frozen', lang)}")
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


def print_stats(stats: Stats, as_json: bool, lang: str = "en") -> None:
    if as_json:
        print(json.dumps(stats.to_json(), ensure_ascii=False, indent=2))
        return
    rep = stats.report
    if rep.settings.enabled:
        s = rep.streak
        out.print(_w("streak_line", lang, s.practice_days, days=_days(s.current, lang), longest=s.longest, practice=s.practice_days,
                     progress=streak.progress(rep)))  # fmt: skip
    out.print(_w("attempts_line", lang, n=stats.attempts, acc=f"{stats.accuracy:.0%}"))
    if not stats.attempts:
        out.print(_w("no_answers", lang))
    else:
        out.print(_accuracy_table("level", stats.by_level, {t.level: t for t in stats.timing}, lang))
        out.print(_accuracy_table("topic", stats.by_topic, {}, lang))
        if stats.weakest:
            table = Table(title=_w("weakest", lang), title_justify="left")
            for name in ("topic", "accuracy", "attempts", "drill it"):
                table.add_column(_col(name, lang), justify="right" if name in ("accuracy", "attempts") else "left")
            for a in stats.weakest:
                table.add_row(a.key, f"{a.accuracy:.0%}", str(a.attempts), drill_command(a.key))
            out.print(table)
        if stats.weekly:
            out.print(_progress_table(stats, lang))
    if stats.whiteboard:
        table = Table(title=_w("whiteboard", lang), title_justify="left")
        for name in ("task", "runs", "passed", "best time"):
            table.add_column(_col(name, lang), justify="left" if name == "task" else "right")
        for w in stats.whiteboard:
            best = "-" if w.best_seconds is None else f"{w.best_seconds:.0f}s"
            table.add_row(w.task, str(w.runs), str(w.passed), best)
        out.print(table)
    if stats.mistakes:
        table = Table(title=_w("mistakes", lang), title_justify="left")
        for name in ("diagnosis", "runs", "now due in drill review"):
            table.add_column(_col(name, lang), justify="right" if name == "runs" else "left")
        for code, n in stats.mistakes:
            table.add_row(code, str(n), ", ".join(questions_for([code])) or "-")
        out.print(table)


BARS = "▁▂▃▄▅▆▇█"
NO_ANSWERS = "·"


def sparkline(values: list[float | None], top: float) -> str:
    """One character per value, in eighths of ``top`` (▁ up to 1/8, █ over 7/8); ``·`` where there is no value (a week without answers)."""
    return "".join(NO_ANSWERS if v is None else BARS[max(0, min(len(BARS), ceil(v / top * len(BARS))) - 1)] if top else BARS[0] for v in values)


def _progress_table(stats: Stats, lang: str) -> Table:
    """Per topic: answers per week and accuracy per week as sparklines, and the accuracy of the first and last week answered."""
    table = Table(title=_w("progress", lang, n=len(stats.weeks)), title_justify="left")
    table.add_column(_col("topic", lang))
    for name in ("answers per week", "accuracy per week", "first → last"):
        table.add_column(_col(name, lang), no_wrap=True)
    for topic, weeks in stats.weekly.items():
        volume = [a.attempts or None for a in weeks]
        accuracy = [a.accuracy if a.attempts else None for a in weeks]
        answered = [a for a in weeks if a.attempts]
        change = f"{answered[0].accuracy:.0%} → {answered[-1].accuracy:.0%}" if len(answered) > 1 else f"{answered[0].accuracy:.0%}"
        table.add_row(topic, sparkline(volume, max(a.attempts for a in weeks)), sparkline(accuracy, 1.0), change)
    return table


def _accuracy_table(by: str, rows: list, timing: dict, lang: str = "en") -> Table:
    table = Table(title=_w(f"by_{by}", lang), title_justify="left")
    table.add_column(_col(by, lang))
    for name in ("attempts", "accuracy", *(("avg time", "avg limit", "timed out") if timing else ())):
        table.add_column(_col(name, lang), justify="right")
    for a in rows:
        cells = [a.key, str(a.attempts), f"{a.accuracy:.0%}"]
        t = timing.get(a.key)
        if t:
            limit = "-" if t.avg_limit is None else f"{t.avg_limit:.0f}s"
            cells += [f"{t.avg_seconds:.0f}s", limit, str(t.timed_out)]
        table.add_row(*cells)
    return table
