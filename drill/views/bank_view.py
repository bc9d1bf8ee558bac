"""Rendering of banks and single questions.

Rich is imported inside each function: ``drill bank list --json`` never needs it, and
``drill bank list`` must start within 1.5x of bare ``import typer, rich, yaml``, so the list
writes the escape codes rich would write itself (a test holds them equal) rather than import
rich.console (~25 ms with drill's console setup).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from drill.bank.schema import LEVELS, TYPES, ChoiceQuestion, NumericQuestion, ShapeQuestion
from drill.text.messages import Msg, translated
from drill.views import ansi

if TYPE_CHECKING:
    from drill.bank.stats import Coverage

LETTERS = "ABCDEFGH"
LEVEL_STYLE = {"L1": "green", "L2": "yellow", "L3": "red"}


def question_row(q) -> dict:
    return {"id": q.id, "level": q.level, "topic": q.topic, "type": q.type, "langs": ["en", "zh"], "tags": list(q.tags)}


def print_list(questions: list, as_json: bool, lang: str = "en") -> None:
    if as_json:
        import json

        print(json.dumps([question_row(q) for q in questions], ensure_ascii=False, indent=2))
        return
    width = max((len(q.id) for q in questions), default=0) + 2
    groups = {topic: [q for q in questions if q.topic == topic] for topic in sorted({q.topic for q in questions})}
    styled_out = ansi.styled_stdout()
    styles = ansi.codes()  # piped: plain text, as rich writes it (rows without trailing spaces)

    def styled(text: str, style: str) -> str:
        return ansi.paint(text, style, styles)

    # Padded lines rather than a rich Table: a Table measures every cell (~0.3 s here).
    lines = []
    for topic, group in groups.items():
        lines.append(styled(topic, "bold cyan") + styled(f"  ({len(group)})", "dim"))
        for q in group:
            row = f"  {q.id:<{width}}" + styled(f"{q.level}  ", LEVEL_STYLE[q.level]) + f"{q.type:<8}{' '.join(q.tags)}"
            lines.append(row if styled_out else row.rstrip())
    count = translated(Msg("{n} questions", n=len(questions)) if len(questions) != 1 else Msg("{n} question", n=1), lang)
    sys.stdout.write("\n".join([*lines, styled(count, "bold")]) + "\n")


def correct_answers(q, lang: str) -> list[str]:
    """The objective answer as text, one line per right option; empty for open questions."""
    if isinstance(q, ChoiceQuestion):
        return [f"{LETTERS[i]}. {q.choices[i].get(lang)}" for i in sorted(q.correct_set)]
    if isinstance(q, NumericQuestion):
        tol = f" ± {q.tolerance:.15g}" if q.tolerance else ""  # plain :g would show 536870912 as 5.36871e+08
        return [f"{q.value:.15g}{tol} {q.unit}".strip()]
    if isinstance(q, ShapeQuestion):
        return [q.shape]
    return []


def print_question(q, lang: str) -> None:
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.panel import Panel

    from drill.text.i18n import t
    from drill.text.mathtext import inline, markdown, plain
    from drill.views.console import out

    head = f"[bold]{q.id}[/]  {q.level} · {q.topic} · {q.type}"
    out.print(Panel(Markdown(markdown(q.prompt.get(lang))), title=head, title_align="left"), soft_wrap=False)  # piped: wrapped, not cut
    if isinstance(q, ChoiceQuestion):
        for i, choice in enumerate(q.choices):
            out.print(f"  [bold]{LETTERS[i]}[/]. {inline(choice.get(lang))}")
    for line in correct_answers(q, lang):
        out.print(f"[green]✔ {inline(line) if isinstance(q, ChoiceQuestion) else escape(plain(line))}[/]")
    out.print(Panel(Markdown(markdown(q.answer.get(lang))), title=t("reference", lang), title_align="left", border_style="green"),
              soft_wrap=False)  # fmt: skip
    out.print(f"[bold]{t('key_points', lang)}[/]")
    for point in q.key_points:
        out.print(f"  • {inline(point.get(lang))}")
    if q.pitfalls:
        out.print(f"[bold]{t('pitfalls', lang)}[/]")
        for pitfall in q.pitfalls:
            out.print(f"  ✗ {inline(pitfall.get(lang))}")
    if q.follow_ups:
        out.print(f"[bold]{t('follow_ups', lang)}[/]: {', '.join(q.follow_ups)}")
    for ref in q.references:
        out.print(f"[dim]{escape(ref)}[/]")


def coverage_json(cov: Coverage) -> dict:
    """Counts per topic and in total, by level and by type, as ``bank stats`` shows them."""
    def counts(row: list[int]) -> dict:
        return {"levels": dict(zip(LEVELS, row)), "types": dict(zip(TYPES, row[len(LEVELS):])), "total": row[-1]}

    rows = dict(cov.rows())
    total = rows.pop("total")
    return {"topics": {topic: counts(row) for topic, row in rows.items()}, **counts(total)}


def print_coverage(cov: Coverage, markdown: bool, as_json: bool = False, lang: str = "en") -> None:
    if markdown:
        print(cov.to_markdown(), end="")
        return
    if as_json:
        import json

        print(json.dumps(coverage_json(cov), ensure_ascii=False, indent=2))
        return
    from rich.table import Table

    from drill.views.console import out

    from drill.text.messages import Msg, translated

    total = translated(Msg("total"), lang)
    table = Table(title=translated(Msg("bank coverage"), lang), title_justify="left")
    for i, name in enumerate((translated(Msg("topic"), lang), *LEVELS, *TYPES, total)):
        table.add_column(name, justify="left" if i == 0 else "right")
    for label, counts in cov.rows():
        table.add_row(total if label == "total" else label, *map(str, counts), style="bold" if label == "total" else None)
    out.print(table)
