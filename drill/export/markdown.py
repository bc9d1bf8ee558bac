"""A printable Markdown cheat sheet of a bank, grouped by topic then level.

Formulas stay ``$…$`` for a Markdown viewer to typeset; Chinese line joins are closed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from drill.bank.schema import LEVELS, ChoiceQuestion
from drill.errors import DrillError
from drill.text.i18n import t
from drill.text.mathtext import tex_markdown
from drill.text.messages import Msg, translated
from drill.views.bank_view import LETTERS, correct_answers

TITLE = Msg("drill cheat sheet")
ANSWER = Msg("Answer")


def front(q, lang: str) -> str:
    """The prompt, with lettered choices for a choice question."""
    text = q.prompt.get(lang).strip()
    if isinstance(q, ChoiceQuestion):
        text += "\n\n" + "\n".join(f"- **{LETTERS[i]}.** {c.get(lang)}" for i, c in enumerate(q.choices))
    return tex_markdown(text)


def back(q, lang: str) -> str:
    """The objective answer if any (one right option per line), the model answer and the key points."""
    answers = correct_answers(q, lang)
    answer = translated(ANSWER, lang)
    parts = [f"**{answer}: {answers[0]}**"] if len(answers) == 1 else []
    if len(answers) > 1:
        parts.append(f"**{answer}:**\n\n" + "\n".join(f"- {a}" for a in answers))
    parts.append(q.answer.get(lang).strip())
    parts.append(f"**{t('key_points', lang)}**\n\n" + "\n".join(f"- {p.get(lang)}" for p in q.key_points))
    return tex_markdown("\n\n".join(parts))


def render(questions: list, lang: str) -> str:
    by_topic: dict[str, list] = defaultdict(list)
    for q in questions:
        by_topic[q.topic].append(q)
    lines = [f"# {translated(TITLE, lang)}", ""]
    for topic in sorted(by_topic):
        lines += [f"## {topic}", ""]
        for level in LEVELS:
            for q in (q for q in by_topic[topic] if q.level == level):
                lines += [f"### {level} · {q.id}", "", front(q, lang), "", back(q, lang), ""]
    return "\n".join(lines)


def write(questions: list, lang: str, path: Path) -> None:
    if not questions:
        raise DrillError("no questions match; nothing to export")
    try:
        path.write_text(render(questions, lang), encoding="utf-8")
    except OSError as exc:
        raise DrillError("{path}: cannot write: {why}", path=str(path), why=exc.strerror or str(exc)) from None
