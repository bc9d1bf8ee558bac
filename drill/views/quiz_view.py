"""Rendering of a quiz: question panels, feedback after each answer, the closing summary."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from drill.answers import LETTERS
from drill.bank.schema import ChoiceQuestion
from drill.quiz import Result, Summary
from drill.views.bank_view import correct_answer

_LINE_HINTS = {
    "choice": "Answer: the letter(s) of your choice, e.g. B or AC.",
    "numeric": "Answer: a number (a unit after it is fine).",
    "shape": "Answer: a shape such as (B, H, T, T).",
    "open": "Answer: any number of lines, then an empty line.",
}


def _seconds(result: Result) -> str:
    used = f"{result.seconds:.0f}s / {result.limit}s"
    if result.cut_off:
        return f"[red]{used} time ran out[/]"
    return f"[yellow]{used} over time[/]" if result.over_time else used


def _outcome(result: Result) -> str:
    if not result.rated:
        return "[dim]not rated[/]"
    if result.correct is None:
        return result.rating.label
    mark = "[green]✔ right[/]" if result.correct else "[red]✘ wrong[/]"
    return mark if result.rating.label == "Good" or not result.correct else f"{mark} ({result.rating.label})"


class QuizView:
    """Writes to ``console`` (stderr under ``--json`` so stdout carries only the JSON)."""

    def __init__(self, console: Console, lang: str, interactive: bool):
        self.console, self.lang, self.interactive = console, lang, interactive

    def question(self, n: int, total: int, q, limit: int) -> None:
        title = f"[bold]{n}/{total}[/]  {q.level} · {q.topic} · {q.type}"
        self.console.print(Panel(Markdown(q.prompt.get(self.lang)), title=title, title_align="left", subtitle=f"{limit}s", subtitle_align="right"))
        if isinstance(q, ChoiceQuestion):
            for i, choice in enumerate(q.choices):
                self.console.print(f"  [bold]{LETTERS[i]}[/]. {choice.get(self.lang)}")
            if len(q.correct_set) > 1:
                self.console.print(f"  [dim](choose {len(q.correct_set)})[/]")
        if not self.interactive:
            self.console.print(_LINE_HINTS[q.type])

    def feedback(self, result: Result) -> None:
        q = result.question
        if result.correct is not None:
            mark = "[green]✔ right[/]" if result.correct else "[red]✘ wrong[/]"
            self.console.print(f"{mark}  answer: {correct_answer(q, self.lang)}  [dim]({_seconds(result)})[/]")
            if not result.correct:  # a miss is when the worked reasoning teaches most
                self._reference(q)
            return
        self.console.print(f"[dim]{_seconds(result)}[/]")
        self._reference(q)
        self.console.print("[bold]" + ("Key points" if self.lang == "en" else "要点") + "[/]  [dim](✔ = a keyword of it is in your answer)[/]")
        for point, hit in zip(q.key_points, result.matched):
            self.console.print(f"  {'[green]✔[/]' if hit else '[dim]·[/]'} {point.get(self.lang)}")
        if not self.interactive:
            self.console.print("Rate yourself: 1 Again, 2 Hard, 3 Good, 4 Easy.")

    def _reference(self, q) -> None:
        title = "reference answer" if self.lang == "en" else "参考答案"
        self.console.print(Panel(Markdown(q.answer.get(self.lang)), title=title, title_align="left", border_style="green"))

    def summary(self, summary: Summary, streak: str | None = None) -> None:
        table = Table(title=f"{summary.kind} · {len(summary.results)}/{summary.total} answered", title_justify="left")
        for name in ("#", "question", "level", "result", "time"):
            table.add_column(name, justify="right" if name == "#" else "left")
        for n, r in enumerate(summary.results, 1):
            table.add_row(str(n), r.question.id, r.question.level, _outcome(r), _seconds(r))
        self.console.print(table)
        levels = "  ".join(f"{level} {p}/{a}" for level, (p, a) in summary.by_level().items())
        passed = sum(r.passed for r in summary.results)
        self.console.print(f"[bold]score {passed}/{len(summary.results)}[/]  {levels}")
        if not summary.complete:
            self.console.print(f"[yellow]stopped early ({summary.stopped}): the {len(summary.results)} answers given are saved.[/]")
        if streak:
            self.console.print(streak)


def summary_dict(summary: Summary) -> dict:
    return {
        "session": summary.session_id,
        "kind": summary.kind,
        "status": "complete" if summary.complete else "incomplete",
        "stopped": summary.stopped,
        "answered": len(summary.results),
        "total": summary.total,
        "passed": sum(r.passed for r in summary.results),
        "levels": {level: {"passed": p, "answered": a} for level, (p, a) in summary.by_level().items()},
        "results": [
            {
                "id": r.question.id,
                "level": r.question.level,
                "topic": r.question.topic,
                "type": r.question.type,
                "answer": r.answer,
                "correct": r.correct,
                "rating": int(r.rating) if r.rated else None,
                "rating_name": r.rating.label if r.rated else None,
                "seconds": round(r.seconds, 1),
                "time_limit": r.limit,
                "over_time": r.over_time,
                "cut_off": r.cut_off,
            }
            for r in summary.results
        ],
    }


def print_json(summary: Summary) -> None:
    print(json.dumps(summary_dict(summary), ensure_ascii=False, indent=2))
