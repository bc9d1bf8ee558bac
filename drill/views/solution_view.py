"""The solution screen: the reference and a second style side by side, your diff, the hand-write question."""

from __future__ import annotations

from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from drill.text.i18n import plural, text
from drill.text.messages import Msg
from drill.views.console import out
from drill.whiteboard.solutions import Solution

SIDE_BY_SIDE_COLUMNS = 120  # narrower terminals get the two styles one under the other

WORDS = {
    "reference": Msg("reference solution"),
    "alternative": Msg("another correct style"),
    "no_alternative": Msg("(no second style ships for {task})"),
    "diff": Msg("your file {name} → the reference"),
    "same": Msg("your file {name} is the reference, line for line"),
    "no_file": Msg("no file of yours to compare (--file names it)"),
    "question": Msg("Say it aloud as in an interview: {id}  ·  drill bank show {id}"),
    "confirm": Msg("You have not passed {task} yet: seeing the solution rates it Again (it comes back soon). Show it? \\[y/N] "),
    "kept_hidden": Msg("Solution not shown; keep going: drill whiteboard {task}"),
    "solved_cards": (Msg("and {n} solved whiteboard task (your passing code, your mistakes and their fixes)"),
                     Msg("and {n} solved whiteboard tasks (your passing code, your mistakes and their fixes)")),
    "rated_again": Msg("{task} rated Again: it comes back in {interval}."),
}


def say(key: str, lang: str, *counts: int, **values: object) -> str:
    return text(plural(WORDS[key], *counts), lang, **values)


def _code(text: str) -> Syntax:
    return Syntax(text, "python", theme="ansi_dark", line_numbers=False, word_wrap=True)


def print_solution(solution: Solution, lang: str, mine_name: str | None = None) -> None:
    out.rule(f"[bold]{say('reference', lang)}[/] · {solution.task}")
    if solution.alternative is not None and out.width >= SIDE_BY_SIDE_COLUMNS:
        table = Table(show_lines=False, expand=True, pad_edge=False)
        table.add_column(say("reference", lang), ratio=1)
        table.add_column(say("alternative", lang), ratio=1)
        table.add_row(_code(solution.reference), _code(solution.alternative))
        out.print(table)
    else:
        out.print(_code(solution.reference))
        if solution.alternative is not None:
            out.rule(say("alternative", lang))
            out.print(_code(solution.alternative))
    if solution.alternative is None:
        out.print(f"[dim]{say('no_alternative', lang, task=solution.task)}[/]")
    name = escape(mine_name or "")
    if solution.diff is None:
        out.print(f"[dim]{say('no_file', lang)}[/]")
    elif not solution.diff:
        out.print(say("same", lang, name=name))
    else:
        out.rule(say("diff", lang, name=name))
        styles = {"+": "green", "-": "red", "@": "cyan"}
        for line in solution.diff:
            style = styles.get(line[:1]) if not line.startswith(("+++", "---")) else "bold"
            out.print(f"[{style}]{escape(line)}[/]" if style else escape(line), soft_wrap=True)
    if solution.question is not None:
        out.print(f"[bold]{say('question', lang, id=solution.question.id)}[/]")


def confirmed(task: str, lang: str) -> bool:
    """Ask before showing a solution to a task not passed yet; no answer (stdin closed) is no."""
    import sys

    try:
        answer = out.input(say("confirm", lang, task=task))
    except EOFError:
        answer = ""
    if not sys.stdin.isatty():
        out.print()  # a piped answer is not echoed: end the question's line
    return answer.strip().lower() in ("y", "yes", "是")


def print_kept_hidden(task: str, lang: str) -> None:
    out.print(say("kept_hidden", lang, task=task))


def print_rated_again(task: str, interval, lang: str) -> None:
    from drill.text.intervals import interval_text

    out.print(f"[yellow]{say('rated_again', lang, task=task, interval=interval_text(interval, lang))}[/]")


def print_solved_cards(n: int, lang: str) -> None:
    out.print(escape(say("solved_cards", lang, n, n=n)))
