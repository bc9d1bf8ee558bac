"""The loaded bank as an Anki deck with both languages on every card.

Anki recognises a note by its GUID, so the GUID is derived from the question id:
importing a newer export updates the existing notes instead of duplicating them.
The model and deck ids are fixed for the same reason. Formulas become MathJax
(``\\(…\\)``, ``\\[…\\]``), which Anki typesets on every platform.
"""

from __future__ import annotations

from pathlib import Path

import genanki
from markdown_it import MarkdownIt

from drill.errors import DrillError
from drill.export_markdown import back, front
from drill.mathtext import mathjax_html

MODEL_ID = 1_607_392_319  # fixed forever: changing it would fork every user's notes
DECK_ID = 2_059_400_110
FIELDS = ("Id", "Level", "Topic", "Type", "Prompt", "Prompt (中文)", "Answer", "Answer (中文)")

_md = MarkdownIt("commonmark").enable("table")

MODEL = genanki.Model(
    MODEL_ID,
    "drill (bilingual)",
    fields=[{"name": name} for name in FIELDS],
    templates=[
        {
            "name": "Question",
            "qfmt": "<div class=meta>{{Level}} · {{Topic}}</div>{{Prompt}}<hr>{{Prompt (中文)}}",
            "afmt": "{{FrontSide}}<hr id=answer>{{Answer}}<hr>{{Answer (中文)}}",
        }
    ],
    css=".card { font-family: sans-serif; font-size: 18px; text-align: left; } .meta { color: #888; font-size: 14px; }",
)


def guid(question_id: str) -> str:
    return genanki.guid_for("drill", question_id)


def note(q) -> genanki.Note:
    """Fields in ``FIELDS`` order: metadata, then prompt and answer in English and Chinese, as HTML."""
    fields = [q.id, q.level, q.topic, q.type, *(mathjax_html(f(q, lang), _md.render) for f in (front, back) for lang in ("en", "zh"))]
    return genanki.Note(model=MODEL, fields=fields, tags=[q.topic, q.level, *q.tags], guid=guid(q.id))


def write(questions: list, path: Path) -> None:
    if not questions:
        raise DrillError("no questions match; nothing to export")
    deck = genanki.Deck(DECK_ID, "drill: LLM interview")
    for q in questions:
        deck.add_note(note(q))
    try:
        genanki.Package(deck).write_to_file(str(path))
    except OSError as exc:
        raise DrillError(f"{path}: cannot write: {exc.strerror or exc}") from None
