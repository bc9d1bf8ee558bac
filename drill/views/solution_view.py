"""The solution screen: the reference and a second style side by side, your diff, the hand-write question."""

from __future__ import annotations

from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from drill.views.console import out
from drill.whiteboard.solutions import Solution

SIDE_BY_SIDE_COLUMNS = 120  # narrower terminals get the two styles one under the other

WORDS: dict[str, tuple[str, str]] = {
    "reference": ("reference solution", "参考解法"),
    "alternative": ("another correct style", "另一种正确写法"),
    "no_alternative": ("(no second style ships for {task})", "（{task} 没有附带第二种写法）"),
    "diff": ("your file {name} → the reference", "你的文件 {name} → 参考解法"),
    "same": ("your file {name} is the reference, line for line", "你的文件 {name} 与参考解法逐行相同"),
    "no_file": ("no file of yours to compare (--file names it)", "没有可对比的文件（用 --file 指定）"),
    "question": ("Say it aloud as in an interview: {id}  ·  drill bank show {id}", "像面试一样讲一遍：{id}  ·  drill bank show {id}"),
    "confirm": ("You have not passed {task} yet: seeing the solution rates it Again (it comes back soon). Show it? \\[y/N] ",
                "你还没有通过 {task}：现在看答案会把它评为“重来”（很快会再出现）。要看吗？\\[y/N] "),
    "kept_hidden": ("Solution not shown; keep going: drill whiteboard {task}", "未显示答案；继续练：drill whiteboard {task}"),
    "solved_cards": ("and {n} solved whiteboard task{s} (your passing code, your mistakes and their fixes)",
                     "以及 {n} 道已通过的白板题（你的通过代码、出过的错和改法）"),
    "rated_again": ("{task} rated Again: it comes back in {interval}.", "{task} 评为“重来”：{interval}后再练。"),
}


def say(key: str, lang: str, **values: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**values)


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
    out.print(escape(say("solved_cards", lang, n=n, s="s" * (n != 1))))
