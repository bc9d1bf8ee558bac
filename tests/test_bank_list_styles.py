"""`drill bank list` in a terminal writes its escape codes itself (no rich.console at start-up): exactly what
rich writes for the same styled text, in colour, under NO_COLOR and on a dumb terminal."""

from __future__ import annotations

import io
import sys

import pytest
from rich.console import Console
from rich.text import Text

from drill.bank.load import load_paths
from drill.paths import bundled_bank_dir
from drill.views import bank_view


def rich_rendering(questions) -> str:
    """The list as rich renders it (the styled Text this view printed before it wrote its own codes)."""
    width = max(len(q.id) for q in questions) + 2
    text = Text()
    for topic in sorted({q.topic for q in questions}):
        group = [q for q in questions if q.topic == topic]
        text.append(topic, style="bold cyan")
        text.append(f"  ({len(group)})\n", style="dim")
        for q in group:
            text.append(f"  {q.id:<{width}}")
            text.append(f"{q.level}  ", style=bank_view.LEVEL_STYLE[q.level])
            text.append(f"{q.type:<8}{' '.join(q.tags)}\n")
    text.append(f"{len(questions)} questions", style="bold")
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, highlight=False).print(text, soft_wrap=True)
    return buffer.getvalue()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}, {"TERM": "dumb"}, {"NO_COLOR": ""}], ids=str)
def test_the_styled_list_is_what_rich_writes(env, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    questions = list(load_paths([bundled_bank_dir()]).questions.values())
    expected = rich_rendering(questions)
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    bank_view.print_list(questions, as_json=False)
    assert screen.getvalue() == expected
    assert ("\x1b[" in expected) == (env.get("TERM") != "dumb")
