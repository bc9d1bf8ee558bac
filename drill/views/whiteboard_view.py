"""Rich rendering of whiteboard sessions and ``drill tasks``."""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from drill.grade.report import FAILING, Report
from drill.text.i18n import plural, text
from drill.text.messages import Msg, translated
from drill.views import trace_view
from drill.views.console import marked, out
from drill.whiteboard.catalog import Exercise, Status

MAX_FAILURES = 3
NARROW_COLUMNS = 80  # `drill tasks` narrower than this drops the track column
TASK_WORDS = {  # `drill tasks` in the terminal and in a notebook (drill.notebook.render)
    "title": Msg("Whiteboard tasks"),
    "columns": (Msg("track"), Msg("task"), Msg("level"), Msg("title"), Msg("status"), Msg("best")),
    "untried": Msg("untried"),
    "failed": Msg("failed"),
    "passed": Msg("passed"),
    "start": Msg("Start one with: drill whiteboard TASK"),
}
STATE_STYLES = {"untried": "dim", "failed": "red", "passed": "green"}


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


WORDS = {  # every line a session prints, as a Chinese engineer would put it
    "resuming": Msg("Resuming your file [bold]{path}[/]; {minutes} min on the clock."),
    "written": Msg("Template written to [bold]{path}[/]; {minutes} min on the clock."),
    "keys": Msg("Save the file to re-grade.  [bold]h[/] hint  ·  [bold]r[/] reset the template  ·  [bold]s[/] solution  ·  [bold]q[/] quit"),
    "not_yet": Msg("[bold]not implemented yet[/]: {where} still raises NotImplementedError. The docstring above it says what to write."),
    "line_of": Msg("line {n} of {path}"),
    "confirm_solution": Msg("Show the solution now? This session ends unsolved and {task} is rated Again. [bold]y[/] to show it, any other key keeps going."),
    "solution_kept": Msg("solution not shown: keep going"),
    "offer": Msg("[bold]s[/] shows the reference solution and your diff  ·  any other key ends ({seconds} s)"),
    "not_attempted": Msg("Not attempted (no failing save): no rating, {task}'s schedule is unchanged."),
    "starting": Msg("starting the grader (imports torch once)..."),
    "clock": Msg("⏱ {clock} left"),
    "passed_all": Msg("[bold green]PASSED[/] all {total} checks"),
    "passed_warn": Msg("[bold green]PASSED[/] {ok} of {total} checks, [yellow]{warn} warn[/]"),
    "failed": Msg("[bold red]FAILED[/] {failing} of {total} checks failed"),
    "left": Msg("⏱ {clock} left"),
    "line": Msg("line {n}"),
    "fix": Msg("fix:"),
    "possibly": Msg("possibly {code}"),
    "more": Msg("... and {n} more (drill grade FILE shows all)"),
    "already": Msg("This file already passes: not counted as a solve. [bold]r[/] starts over from the template (your file is backed up), [bold]q[/] quits; --record counts it."),
    "hint": Msg("hint {number}/{total}"),
    "no_more": Msg("No more hints: all {total} are shown above."),
    "confirm": Msg("Reset {path} to the template? Your file is kept as {backup}. [bold]y[/] to reset, any other key keeps it."),
    "reset": Msg("reset: {path} is the template again"),
    "backup": Msg("your previous file: {backup}"),
    "kept": Msg("not reset: your file is unchanged"),
    "times_up": Msg("⏰ Time's up!"),
    "solved": Msg("[bold green]Solved {task} in {clock}[/] · saved to your history"),
    "time_is_up": Msg("Time's up after {clock}; your file is kept, run the same command to resume."),
    "stopped": Msg("Stopped after {clock}; your file is kept, run the same command to resume."),
    "rated": Msg("Rated [bold]{rating}[/] ({why}): {task} comes back in {interval}."),
    "rated_today": Msg("{task} was already reviewed today: its schedule is unchanged."),
    "why_again": Msg("not solved"),
    "why_hard": ((Msg("{hints} hint, {saves} failing save"), Msg("{hints} hint, {saves} failing saves")),  # by hints, then saves
                 (Msg("{hints} hints, {saves} failing save"), Msg("{hints} hints, {saves} failing saves"))),
    "why_good": Msg("solved without hints"),
    "why_easy": Msg("solved without hints in a third of the time"),
}  # fmt: skip


def say(key: str, lang: str, *counts: int, **values: object) -> str:
    return text(plural(WORDS[key], *counts), lang, **values)


class SessionView:
    """What a watch-mode session prints: one compact block per save, and a clock line redrawn every second."""

    def __init__(self, lang: str):
        self.lang = lang
        self._clock_shown = False
        self._task, self._path = "", Path()

    def _print(self, text: str) -> None:
        if self._clock_shown:  # the clock line is rewritten in place: clear it before a line that stays
            out.file.write("\r\x1b[2K")
            self._clock_shown = False
        out.print(text)

    def starting(self, exercise: Exercise, path: Path, resumed: bool, minutes: int) -> None:
        title = exercise.title.get(self.lang, exercise.title["en"])
        self._task, self._path = exercise.id, path
        out.rule(f"[bold]{escape(title)}[/] · {exercise.id} · {exercise.level}")
        self._print(say("resuming" if resumed else "written", self.lang, path=escape(str(path)), minutes=minutes))
        self._print(say("keys", self.lang))
        self._print(f"[dim]{say('starting', self.lang)}[/]")

    def tick(self, left_s: float) -> None:
        if not out.is_terminal:
            return  # a pipe gets the clock with each report only
        out.file.write("\r\x1b[2K")
        out.print(f"[dim]{say('clock', self.lang, clock=clock(left_s))}[/]", end="")
        out.file.flush()
        self._clock_shown = True

    def graded(self, report: Report, left_s: float) -> None:
        failing = [c for c in report.checks if c.status in FAILING]
        warnings = [c for c in report.checks if c.status == "warn"]
        total = len(report.checks)
        took = f"({report.duration_s:.2f} s)"
        if report.passed:
            verdict = say("passed_warn", self.lang, ok=total - len(warnings), total=total, warn=len(warnings)) if warnings else say("passed_all", self.lang, total=total)
            self._print(f"{verdict}  {took}")
        elif [d.code for d in report.diagnosis] == ["not-implemented"]:  # the untouched template: one line, not 20 checks
            line, path = (report.first_divergence or {}).get("line"), escape(str(self._path))
            where = say("line_of", self.lang, n=line, path=path) if line else path
            self._print(f"{say('not_yet', self.lang, where=where)}  {took}")
            return
        else:
            self._print(f"{say('failed', self.lang, failing=len(failing), total=total)}  {took}  {say('left', self.lang, clock=clock(left_s))}")
            found = report.first_divergence
            if found:  # where first: "line 7: mask applied after softmax"
                what = report.diagnosis[0].text(self.lang)[0] if report.diagnosis else trace_view.message(found, self.lang)
                self._print(f"  [bold]{say('line', self.lang, n=found['line'])}:[/] {marked(what, out)}  [dim]{escape(found['code'])}[/]")
        for d in report.diagnosis:
            message, fix = d.text(self.lang)
            self._print(f"  [bold red]{d.code}[/] {marked(message, out)}\n    [green]{say('fix', self.lang)}[/] {marked(fix, out)}")
        for d in report.candidates:  # possible only: the hint never follows it
            self._print(f"  [yellow]{say('possibly', self.lang, code=d.code)}[/] {marked(d.text(self.lang)[0], out)}")
        for check in failing[:MAX_FAILURES]:
            self._print(f"  [red]✗[/] {check.id}: {marked(check.text(self.lang), out)}")
        if len(failing) > MAX_FAILURES:
            self._print(f"  [dim]{say('more', self.lang, n=len(failing) - MAX_FAILURES)}[/]")
        for check in warnings[:MAX_FAILURES]:
            self._print(f"  [yellow]![/] {check.id}: {marked(check.text(self.lang), out)}")

    def already_passing(self) -> None:
        self._print(f"[yellow]{say('already', self.lang)}[/]")

    def hint(self, number: int, total: int, text: str) -> None:
        self._print(f"[yellow]{say('hint', self.lang, number=number, total=total)}[/] {marked(text, out)}")

    def no_more_hints(self, total: int) -> None:
        self._print(f"[yellow]{say('no_more', self.lang, total=total)}[/]")

    def confirm_reset(self, path: Path, backup: Path) -> None:
        self._print(f"[yellow]{say('confirm', self.lang, path=escape(str(path)), backup=escape(backup.name))}[/]")

    def reset(self, path: Path, backup: Path | None) -> None:
        self._print(f"[yellow]{say('reset', self.lang, path=escape(str(path)))}[/]")
        if backup is not None:
            self._print(f"  {say('backup', self.lang, backup=escape(str(backup)))}")

    def reset_kept(self) -> None:
        self._print(say("kept", self.lang))

    def confirm_solution(self) -> None:
        self._print(f"[yellow]{say('confirm_solution', self.lang, task=self._task)}[/]")

    def solution_kept(self) -> None:
        self._print(say("solution_kept", self.lang))

    def offer_solution(self) -> None:
        from drill.whiteboard.session import OFFER_S

        self._print(say("offer", self.lang, seconds=f"{OFFER_S:g}"))

    def finished(self) -> None:
        """Leave the cursor on a fresh line for the closing message."""
        if self._clock_shown:
            out.file.write("\r\x1b[2K")
            out.file.flush()
            self._clock_shown = False

    def times_up(self) -> None:
        out.file.write("\a")  # the terminal's bell
        self._print(f"[bold red]{say('times_up', self.lang)}[/]")


RATING_WHY = {1: "why_again", 2: "why_hard", 3: "why_good", 4: "why_easy"}


def print_outcome(outcome, streak_line: Msg | None, lang: str = "en", review=None) -> None:
    """The closing lines, the same for q, Ctrl-C and time up; ``review``: session.record's result."""
    from drill.text.i18n import t
    from drill.text.intervals import interval_text

    if outcome.passed:
        out.print(say("solved", lang, task=outcome.task, clock=clock(outcome.seconds)))
    else:
        out.print(say("time_is_up" if outcome.stopped == "time" else "stopped", lang, clock=clock(outcome.seconds)))
    if review is None:
        out.print(f"[dim]{say('not_attempted', lang, task=outcome.task)}[/]")
    else:
        rating, interval = review
        if rating is None:
            out.print(f"[dim]{say('rated_today', lang, task=outcome.task)}[/]")
        else:
            why = say(RATING_WHY[int(rating)], lang, outcome.hints, outcome.failing_saves, hints=outcome.hints, saves=outcome.failing_saves)
            out.print(say("rated", lang, rating=t(rating.name, lang), why=why, task=outcome.task, interval=interval_text(interval, lang)))
    if streak_line:
        out.print(f"[dim]{escape(translated(streak_line, lang))}[/]")


TRACK_NAMES = {
    "attention": Msg("attention"),
    "positions": Msg("positions"),
    "inference": Msg("inference"),
    "building blocks": Msg("building blocks"),
    "training": Msg("training"),
    "alignment": Msg("alignment"),
    "decoding": Msg("decoding"),
    "tokenization": Msg("tokenization"),
    "ml fundamentals": Msg("ML fundamentals"),
    "systems": Msg("systems"),
    "kernels": Msg("kernels"),
}


def print_tasks(statuses: list[Status], as_json: bool, lang: str) -> None:
    if as_json:
        print(json.dumps([s.to_json() for s in statuses], ensure_ascii=False, indent=2))
        return
    narrow = out.width < NARROW_COLUMNS  # the track goes on a row of its own; ids never shrink, titles wrap
    table = Table(title=translated(TASK_WORDS["title"], lang), title_justify="left")
    widest = max((len(s.exercise.id) for s in statuses), default=4)
    columns = TASK_WORDS["columns"]
    for key in columns[1:] if narrow else columns:
        table.add_column(translated(key, lang), justify="right" if key == "best" else "left", no_wrap=key == "task",
                         min_width=widest if key == "task" else None, overflow="fold" if key == "title" else "ellipsis")  # fmt: skip
    track = None
    for s in statuses:  # the catalog's order: by track, then by level
        if track is not None and s.exercise.track != track:
            table.add_section()
        name = translated(TRACK_NAMES[s.exercise.track], lang)
        if narrow and s.exercise.track != track:
            table.add_row(f"[bold]{name}[/]", "", "", "", "")
        shown = name if s.exercise.track != track else ""
        track = s.exercise.track
        best = "-" if s.best_seconds is None else clock(s.best_seconds)
        row = (s.exercise.id, s.exercise.level, s.exercise.title.get(lang, s.exercise.title["en"]),
               f"[{STATE_STYLES[s.state]}]{translated(TASK_WORDS[s.state], lang)}[/]", best)  # fmt: skip
        table.add_row(*row) if narrow else table.add_row(shown, *row)
    out.print(table)
    out.print(f"[dim]{translated(TASK_WORDS['start'], lang)}[/]")
