"""Rendering of a quiz: question panels, feedback after each answer, the closing summary."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from drill.practice.answers import LETTERS
from drill.bank.schema import ChoiceQuestion
from drill.text.i18n import t, word_label
from drill.text.mathtext import inline, markdown, plain
from drill.text.messages import Msg, translated
from drill.practice.quiz import Result, Summary, rating_buttons
from drill.views.bank_view import correct_answers

_LINE_HINTS = {
    "choice": Msg("Answer: the letter(s) of your choice, e.g. B or AC."),
    "numeric": Msg("Answer: a number, e.g. 0.76, 29/38, 76%, 2^29 or 4 GiB."),
    "shape": Msg("Answer: a shape such as (B, H, T, T)."),
    "open": Msg("Answer: any number of lines, then an empty line."),
}


def _seconds(result: Result, lang: str) -> str:
    used = f"{result.seconds:.0f}s / {result.limit}s"
    if result.cut_off:
        return f"[red]{used} {t('time_ran_out', lang)}[/]"
    return f"[yellow]{used} {t('over_time', lang)}[/]" if result.over_time else used


def _mark(correct: bool, lang: str) -> str:
    return f"[green]✔ {t('right', lang)}[/]" if correct else f"[red]✘ {t('wrong', lang)}[/]"


def _outcome(result: Result, lang: str) -> str:
    if not result.rated:
        return f"[dim]{t('not_rated', lang)}[/]"
    rating = t(result.rating.label, lang)
    if result.correct is None:
        return rating
    if result.unreadable:
        return f"[red]✘ {t('unreadable', lang)}[/]"
    mark = _mark(result.correct, lang)
    return mark if result.rating.label == "Good" or not result.correct else f"{mark} ({rating})"


class QuizView:
    """Writes to ``console`` (stderr under ``--json`` so stdout carries only the JSON)."""

    def __init__(self, console: Console, lang: str, interactive: bool):
        self.console, self.lang, self.interactive = console, lang, interactive

    def question(self, n: int, total: int, q, limit: int) -> None:
        title = f"[bold]{n}/{total}[/]  {q.level} · {q.topic} · {word_label(q.type, self.lang)}"
        self._panel(q.prompt.get(self.lang), title=title, subtitle=f"{limit}s", subtitle_align="right")
        if isinstance(q, ChoiceQuestion):
            choices = Table.grid(padding=(0, 1))  # a wrapped choice keeps a hanging indent under its own text
            choices.add_column(no_wrap=True)
            choices.add_column()
            for i, choice in enumerate(q.choices):
                choices.add_row(f"  [bold]{LETTERS[i]}[/].", inline(choice.get(self.lang)))
            self.console.print(choices)
            if len(q.correct_set) > 1:  # never how many: that would give part of the answer away
                self.console.print(f"  [dim]({t('select_all', self.lang)})[/]")
        if not self.interactive:
            self.console.print(translated(_LINE_HINTS[q.type], self.lang))

    def recap(self, n: int, total: int, q) -> None:
        self.console.rule(f"[bold]{n}/{total}[/]  {q.id}", align="left")
        self._panel(q.prompt.get(self.lang), title=f"{q.level} · {q.topic} · {word_label(q.type, self.lang)}")

    def feedback(self, result: Result) -> None:
        q, lang = result.question, self.lang
        if result.correct is not None:
            self._verdict(result)
            if not result.correct:  # a miss is when the worked reasoning teaches most
                self._reference(q)
            return
        self.console.print(f"[dim]{_seconds(result, lang)}[/]")
        self._reference(q)
        self.console.print(f"[bold]{t('key_points', lang)}[/]  [dim]{t('key_point_hint', lang)}[/]")
        for point, hit in zip(q.key_points, result.matched):
            self.console.print(f"  {'[green]✔[/]' if hit else '[dim]·[/]'} {inline(point.get(lang))}")
        if not self.interactive:
            buttons = rating_buttons(result.intervals, lang)
            self.console.print(t("rate_hint_buttons", lang, buttons=buttons) if buttons else t("rate_hint", lang))

    def _verdict(self, result: Result) -> None:
        """The mark, then the right answer: on the same line when it is one line, else one right option per line."""
        lang = self.lang
        if result.unreadable:
            mark = f"[red]✘ {escape(t('unreadable_because', lang, why=t(result.unreadable, lang, **result.values)))}[/]"
        else:
            mark = _mark(result.correct, lang)
        show = inline if isinstance(result.question, ChoiceQuestion) else lambda line: escape(plain(line))  # a shape's b*h is no emphasis
        lines = [show(line) for line in correct_answers(result.question, lang)]
        time_used = f"[dim]({_seconds(result, lang)})[/]"
        if len(lines) == 1:
            self.console.print(f"{mark}  {t('answer_is', lang, answer=lines[0])}  {time_used}")
        else:
            self.console.print(f"{mark}  {time_used}")
            self.console.print(t("answer_is", lang, answer="").rstrip())
            for line in lines:
                self.console.print(f"  {line}")
        difference = partial_choice(result, lang)
        if difference:
            self.console.print(f"  [yellow]{difference}[/]")
        if result.note:
            self.console.print(f"  [dim]{escape(t(result.note, lang, **result.values))}[/]")

    def _reference(self, q) -> None:
        self._panel(q.answer.get(self.lang), title=t("reference", self.lang), border_style="green")

    def _panel(self, text: str, **options) -> None:
        """Bank Markdown in a panel; never cropped, even on a console that does not wrap (stderr under --json)."""
        self.console.print(Panel(Markdown(markdown(text)), title_align="left", **options), soft_wrap=False)

    def summary(self, summary: Summary, streak: Msg | None = None, minutes: int | None = None) -> None:
        lang = self.lang
        if not summary.results and not summary.out_of_time:  # Ctrl-C at the first question: no empty table, no "0 answers saved"
            self.console.print(f"[yellow]{t('nothing_answered', lang)}[/]")
            self._resume_hint(summary)
            return
        if summary.out_of_time and minutes:
            self.console.print(f"[bold red]{t('mock_over', lang, minutes=minutes, n=len(summary.results))}[/]")
        table = Table(title=f"{word_label(summary.kind, lang)} · {len(summary.results)}/{summary.total} {t('answered', lang)}", title_justify="left")
        table.add_column("#", justify="right")
        for name in ("question", "level", "result", "time"):
            table.add_column(t(name, lang))
        for n, r in enumerate(summary.results, 1):
            table.add_row(str(n), r.question.id, r.question.level, _outcome(r, lang), _seconds(r, lang))
        self.console.print(table)
        levels = "  ".join(f"{level} {p}/{a}" for level, (p, a) in summary.by_level().items())
        passed = sum(r.passed for r in summary.results)
        self.console.print(f"[bold]{t('score', lang)} {passed}/{len(summary.results)}[/]  {levels}")
        if not summary.complete:
            self.console.print(f"[yellow]{t('stopped_early', lang, why=t('stopped_' + summary.stopped, lang), n=len(summary.results))}[/]")
        self._resume_hint(summary)
        if streak:
            self.console.print(translated(streak, lang))

    def _resume_hint(self, summary: Summary) -> None:
        left = remaining(summary)
        if left:
            self.console.print(f"[bold]{t('resume_hint', self.lang, left, n=left)}[/]")


def remaining(summary: Summary) -> int:
    """Questions a stopped quiz did not get to, which ``drill quiz --resume`` asks (0: nothing to resume)."""
    if summary.kind != "quiz" or summary.complete:
        return 0
    return summary.total - len(summary.results)


def is_multi_select(q) -> bool:
    return isinstance(q, ChoiceQuestion) and len(q.correct_set) > 1


def partial_choice(result: Result, lang: str) -> str:
    """``missed D · extra B`` (漏选 D · 多选 B) for a wrong answer to a select-all-that-apply question."""
    if result.correct or result.unreadable or not is_multi_select(result.question):
        return ""
    parts = [t(key, lang, letters=" ".join(letters)) for key, letters in (("missed", result.missed), ("extra", result.extra)) if letters]
    return " · ".join(parts)


def _question_text(q, lang: str) -> dict:
    """The whole question as the bank has it, so a script never needs the bank to know what was asked."""
    text = {"prompt": q.prompt.get(lang)}
    if isinstance(q, ChoiceQuestion):
        text["choices"] = [c.get(lang) for c in q.choices]
    if q.objective:
        text["expected"] = correct_answers(q, lang)
    text["reference"] = q.answer.get(lang)
    return text


def summary_dict(summary: Summary, lang: str = "en") -> dict:
    return {
        "session": summary.session_id,
        "kind": summary.kind,
        "status": "complete" if summary.complete else "incomplete",
        "stopped": summary.stopped,
        "answered": len(summary.results),
        "total": summary.total,
        "passed": sum(r.passed for r in summary.results),
        "levels": {level: {"passed": p, "answered": a} for level, (p, a) in summary.by_level().items()},
        "remaining": remaining(summary),
        "resume": "drill quiz --resume" if remaining(summary) else None,
        "results": [
            {
                "id": r.question.id,
                "level": r.question.level,
                "topic": r.question.topic,
                "type": r.question.type,
                **_question_text(r.question, lang),
                "answer": r.answer,
                "correct": r.correct,
                "unreadable": r.unreadable is not None,
                "rating": int(r.rating) if r.rated else None,
                "rating_name": r.rating.label if r.rated else None,
                "seconds": round(r.seconds, 1),
                "time_limit": r.limit,
                "over_time": r.over_time,
                "cut_off": r.cut_off,
                **({"missed": r.missed, "extra": r.extra} if is_multi_select(r.question) and not r.unreadable else {}),
            }
            for r in summary.results
        ],
    }


def print_json(summary: Summary, lang: str = "en") -> None:
    print(json.dumps(summary_dict(summary, lang), ensure_ascii=False, indent=2))

