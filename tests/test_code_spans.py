"""Code in a message's backticks is shown as code: styled, its backticks dropped, where the console shows styles (a
terminal, the notebook's HTML); a pipe or NO_COLOR keeps the backticks, the only mark left there."""

from __future__ import annotations

import io

from rich.console import Console

from drill.notebook.render import said
from drill.views.console import marked

MESSAGE = "`input_ids` [4, 9]，`pad_id=0`：`labels[0, 3]` 是 -100"


def shown(console: Console, text: str) -> str:
    console.print(text, soft_wrap=True)
    return console.file.getvalue()


def test_a_terminal_shows_code_styled_without_its_backticks():
    terminal = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=200, highlight=False)
    out = shown(terminal, marked(MESSAGE, terminal))
    assert "`" not in out and "\x1b[36minput_ids\x1b[0m" in out and "\x1b[36mlabels[0, 3]\x1b[0m" in out  # brackets kept
    assert "[4, 9]" in out


def test_a_pipe_or_no_color_keeps_the_backticks_and_the_text_whole():
    pipe = Console(file=io.StringIO(), width=200, highlight=False)
    assert shown(pipe, marked(MESSAGE, pipe)).strip() == MESSAGE
    plain = Console(file=io.StringIO(), force_terminal=True, no_color=True, width=200, highlight=False)
    assert "`pad_id=0`" in shown(plain, marked(MESSAGE, plain))


def test_markup_in_a_message_is_text_not_style():
    terminal = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=200, highlight=False)
    assert "[bold]x[/bold]" in shown(terminal, marked("`[bold]x[/bold]` and [red]y", terminal))


def test_the_notebook_shows_code_as_html_code():
    assert said("`a<b` 与 `c`") == "<code>a&lt;b</code> 与 <code>c</code>"
