"""The loaded bank as an Anki deck with both languages on every card.

Anki recognises a note by its GUID, so the GUID is derived from the question id:
importing a newer export updates the existing notes instead of duplicating them.
The model and deck ids are fixed for the same reason. Formulas become MathJax
(``\\(…\\)``, ``\\[…\\]``), which Anki typesets on every platform.

With ``--solved``, each whiteboard task you have passed adds one card of its own model: the task on
the front; your passing code (the file of the latest passing run in ``grade_runs``) and the diagnosis
codes your failing runs hit on the way, each with its fix, on the back.
"""

from __future__ import annotations

import html
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import cmarkgfm
import genanki
from cmarkgfm.cmark import Options

from drill.errors import DrillError
from drill.export.markdown import back, front
from drill.text.mathtext import mathjax_html
from drill.text.messages import Msg, translated

MODEL_ID = 1_607_392_319  # fixed forever: changing it would fork every user's notes
DECK_ID = 2_059_400_110
FIELDS = ("Id", "Level", "Topic", "Type", "Prompt", "Prompt (中文)", "Answer", "Answer (中文)")


def _html(markdown: str) -> str:
    """CommonMark with tables, raw HTML kept (as markdown-it's commonmark preset): cmark-gfm in C, ~15x faster."""
    return cmarkgfm.markdown_to_html_with_extensions(markdown, options=Options.CMARK_OPT_UNSAFE, extensions=["table"])


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


SOLVED_MODEL_ID = 1_607_392_320  # fixed forever, like MODEL_ID
SOLVED_FIELDS = ("Task", "Title", "Title (中文)", "Code", "Mistakes", "Mistakes (中文)")
SOLVED_MODEL = genanki.Model(
    SOLVED_MODEL_ID,
    "drill solved task (bilingual)",
    fields=[{"name": name} for name in SOLVED_FIELDS],
    templates=[
        {
            "name": "Solved task",
            "qfmt": "<div class=meta>{{Task}}</div>{{Title}}<br>{{Title (中文)}}",
            "afmt": "{{FrontSide}}<hr id=answer>{{Code}}{{Mistakes}}<hr>{{Mistakes (中文)}}",
        }
    ],
    css=".card { font-family: sans-serif; font-size: 18px; text-align: left; } .meta { color: #888; font-size: 14px; }"
    " pre { font-size: 14px; }",
)


@dataclass(frozen=True)
class SolvedTask:
    task: str
    title: dict[str, str]
    file: str
    code: str | None  # None when the file of the passing run is gone
    codes: tuple[str, ...]  # diagnosis codes of the failing runs before the latest pass, first seen first


def solved_tasks(conn: sqlite3.Connection) -> list[SolvedTask]:
    """Every passed task in catalog order, with its latest passing file and the mistakes made before it."""
    from drill.whiteboard import catalog

    found = []
    for exercise in catalog.load().values():
        last = conn.execute("SELECT id, file FROM grade_runs WHERE task = ? AND passed = 1 ORDER BY id DESC LIMIT 1", (exercise.id,)).fetchone()
        if last is None:
            continue
        codes: list[str] = []
        for (raw,) in conn.execute("SELECT codes FROM grade_runs WHERE task = ? AND passed = 0 AND id < ? ORDER BY id", (exercise.id, last[0])):
            codes += [c for c in json.loads(raw) if c not in codes and c != "not-implemented"]
        try:
            code = Path(last[1]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            code = None
        found.append(SolvedTask(exercise.id, exercise.title, last[1], code, tuple(codes)))
    return found


NO_MISTAKE = Msg("No mistake on the way.")


def _mistakes_html(codes: tuple[str, ...], lang: str) -> str:
    from drill.diagnosis_codes import all_codes

    known = all_codes()
    if not codes:
        return f"<p>{html.escape(translated(NO_MISTAKE, lang))}</p>"
    items, label = [], html.escape(translated(Msg("fix:"), lang))
    for name in codes:
        entry = known.get(name)
        message, fix = ((entry.message, entry.fix) if lang == "en" else (entry.message_zh, entry.fix_zh)) if entry else (name, "")
        items.append(f"<li><b>{html.escape(name)}</b>: {html.escape(message)}<br><i>{label}</i> {html.escape(fix)}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def solved_note(t: SolvedTask) -> genanki.Note:
    gone = Msg("(file gone: {file})", file=t.file)
    code = (f"<pre><code>{html.escape(t.code)}</code></pre>" if t.code is not None
            else f"<p>{html.escape(gone)} · {html.escape(translated(gone, 'zh'))}</p>")  # fmt: skip
    fields = [t.task, html.escape(t.title["en"]), html.escape(t.title["zh"]), code, _mistakes_html(t.codes, "en"), _mistakes_html(t.codes, "zh")]
    return genanki.Note(model=SOLVED_MODEL, fields=fields, tags=["drill-solved", t.task], guid=genanki.guid_for("drill-task", t.task))


def guid(question_id: str) -> str:
    return genanki.guid_for("drill", question_id)


def note(q) -> genanki.Note:
    """Fields in ``FIELDS`` order: metadata, then prompt and answer in English and Chinese, as HTML."""
    fields = [q.id, q.level, q.topic, q.type, *(mathjax_html(f(q, lang), _html) for f in (front, back) for lang in ("en", "zh"))]
    return genanki.Note(model=MODEL, fields=fields, tags=[q.topic, q.level, *q.tags], guid=guid(q.id))


def write(questions: list, path: Path, solved: list[SolvedTask] = ()) -> None:
    if not questions and not solved:
        raise DrillError("no questions match; nothing to export")
    deck = genanki.Deck(DECK_ID, "drill: LLM interview")
    for q in questions:
        deck.add_note(note(q))
    for t in solved:
        deck.add_note(solved_note(t))
    try:
        genanki.Package(deck).write_to_file(str(path))
    except OSError as exc:
        raise DrillError("{path}: cannot write: {why}", path=str(path), why=exc.strerror or str(exc)) from None
