"""The grade report, a hint and a solution as HTML for a notebook's output cell (and a plain-text summary).

The words are the terminal report's (drill.views.grade_view), so both say the same thing in
both languages; the trace and the leak pictures are rich markup lines, exported by rich itself.
Everything from the user's code or the grader is escaped.
"""

from __future__ import annotations

import io
from html import escape

from rich.markup import escape as rich_escape

from drill.grade.report import FAILING, Report
from drill.views import trace_view
from drill.text.i18n import text
from drill.text.messages import translated
from drill.views.console import CODE_SPAN
from drill.views.grade_view import STATUS, WORDS, category, counts
from drill.views.whiteboard_view import TASK_WORDS

COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#cf222e", "warn": "#9a6700", "skip": "#6e7781"}
SIGNS = {"pass": "✓", "fail": "✗", "error": "✗", "warn": "!", "skip": "-"}
CELL = "text-align:left;vertical-align:top;padding:2px 8px"  # JupyterLab right-aligns table cells by default
BOX = "font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;line-height:1.45"


def _status(status: str, lang: str) -> str:
    word = translated(STATUS.get(status, status), lang)
    return f'<span style="color:{COLOURS.get(status, "inherit")};font-weight:600">{SIGNS.get(status, "")} {escape(word)}</span>'


def rich_lines(lines: list[str]) -> str:
    """Rich markup lines as a <pre> block with inline colours."""
    from rich.console import Console

    console = Console(record=True, file=io.StringIO(), width=200, force_terminal=True, color_system="truecolor", force_jupyter=False)
    for line in lines:
        console.print(line, no_wrap=True, overflow="ellipsis", highlight=False)
    return console.export_html(inline_styles=True, code_format=f'<pre style="{BOX};white-space:pre;overflow-x:auto">{{code}}</pre>')


def said(message: str) -> str:
    """A message as HTML: escaped, its `code` spans as <code>."""
    return CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", escape(message))


def report_html(report: Report, lang: str) -> str:
    columns = "".join(f'<th style="{CELL}">{escape(translated(c, lang))}</th>' for c in WORDS["columns"])
    rows = "".join(
        f'<tr><td style="{CELL};white-space:nowrap">{_status(c.status, lang)}</td>'
        f'<td style="{CELL};white-space:nowrap"><code>{escape(c.id)}</code></td>'
        f'<td style="{CELL};color:#6e7781">{escape(category(c.category, lang))}</td>'
        f'<td style="{CELL}">{said(c.text(lang))}</td></tr>'
        for c in report.checks
    )
    title = escape(text(WORDS["title"], lang, task=report.task, device=report.device))
    parts = [f'<div class="drill-report" style="{BOX}"><div style="font-weight:600;margin-bottom:4px">{title}</div>',
             f'<table style="border-collapse:collapse"><thead><tr>{columns}</tr></thead><tbody>{rows}</tbody></table>']  # fmt: skip
    trace = []
    if report.trace is not None:
        trace += trace_view.trace_lines(report.trace, lang)
        if report.first_divergence:
            trace.append(f"[bold red]{rich_escape(trace_view.where(report.first_divergence, lang))}[/]")
    for picture in report.pictures:
        trace += trace_view.picture_lines(picture, lang)
    if trace:
        parts.append(rich_lines(trace))
    if report.diagnosis:
        items = []
        if report.first_divergence:
            items.append(f"<div><b>{said(trace_view.where(report.first_divergence, lang))}</b></div>")
        for d in report.diagnosis:
            message, fix = d.text(lang)
            items.append(f'<div style="margin:4px 0"><code style="color:#cf222e;font-weight:600">{escape(d.code)}</code> '
                         f'{said(message)}<br><span style="color:#1a7f37">{escape(text(WORDS["fix"], lang))}</span> {said(fix)}</div>')  # fmt: skip
        parts.append(f'<div style="border:1px solid #cf222e;border-radius:6px;padding:6px 10px;margin:8px 0">'
                     f'<div style="font-weight:600;color:#cf222e">{escape(text(WORDS["diagnosis"], lang))}</div>{"".join(items)}</div>')  # fmt: skip
    elif not report.passed:
        if report.first_divergence and report.trace is None:
            parts.append(f'<div style="color:#cf222e;font-weight:600">{said(trace_view.where(report.first_divergence, lang))}</div>')
        parts.append(f'<div style="color:#6e7781">{escape(text(WORDS["no_code"], lang))}</div>')
    summary = counts(report.checks, lang)
    verdict = text(WORDS["passed" if report.passed else "failed"], lang)
    colour = COLOURS["pass" if report.passed else "fail"]
    parts.append(f'<div style="margin-top:6px"><b style="color:{colour}">{escape(verdict)}</b>  {escape(summary)}  '
                 f"({report.duration_s:.1f} s)</div></div>")  # fmt: skip
    return "".join(parts)


STATE_COLOURS = {"untried": "#6e7781", "failed": "#cf222e", "passed": "#1a7f37"}


def tasks_html(statuses: list, lang: str) -> str:
    """``%drill tasks``: an HTML table, since a browser's fonts do not keep rich's Chinese columns aligned."""
    from drill.views.whiteboard_view import TRACK_NAMES, clock

    head = "".join(f'<th style="{CELL}">{escape(translated(c, lang))}</th>' for c in TASK_WORDS["columns"])
    rows, track = [], None
    for s in statuses:
        e = s.exercise
        shown = translated(TRACK_NAMES[e.track], lang) if e.track != track else ""
        track = e.track
        best = "-" if s.best_seconds is None else clock(s.best_seconds)
        rows.append(f'<tr><td style="{CELL}">{escape(shown)}</td><td style="{CELL}"><code>{escape(e.id)}</code></td>'
                    f'<td style="{CELL}">{e.level}</td><td style="{CELL}">{escape(e.title.get(lang, e.title["en"]))}</td>'
                    f'<td style="{CELL};color:{STATE_COLOURS[s.state]}">{translated(TASK_WORDS[s.state], lang)}</td><td style="{CELL}">{best}</td></tr>')  # fmt: skip
    return f'<table style="border-collapse:collapse;{BOX}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def report_text(report: Report, lang: str) -> str:
    """The verdict, the failing checks and the diagnosis codes: for front ends that show no HTML."""
    verdict = text(WORDS["passed" if report.passed else "failed"], lang)
    lines = [f"{text(WORDS['title'], lang, task=report.task, device=report.device)}: {verdict}"]
    lines += [f"  {SIGNS[c.status]} {c.id}: {c.text(lang)}" for c in report.checks if c.status in FAILING]
    lines += [f"  {d.code}: {d.text(lang)[0]}" for d in report.diagnosis]
    return "\n".join(lines)


def note_html(title: str, text: str) -> str:
    """A hint or a one-line message in a quiet box."""
    return (f'<div style="{BOX};border-left:3px solid #0969da;padding:4px 10px">'
            f'<b>{escape(title)}</b>{" " if title else ""}{escape(text)}</div>')  # fmt: skip


def code_html(title: str, source: str) -> str:
    return f'<div style="{BOX}"><b>{escape(title)}</b><pre style="{BOX};white-space:pre;overflow-x:auto">{escape(source)}</pre></div>'
