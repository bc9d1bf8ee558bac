"""The two consoles every view writes to (with line breaks inside Chinese text: drill.views.cjk_wrap).

Piped stdout is not wrapped: a script or a file gets each line whole, never cut mid-sentence at
rich's default 80 columns (tables and panels still lay out at that width). Code in a message's backticks is shown
as code where styles show (:func:`marked`).
"""

import re

from rich.console import Console
from rich.markup import escape

from drill.views import cjk_wrap

CODE_SPAN = re.compile(r"`([^`\n]+)`")  # the catalogs' mark for code: `q @ k.T`, `pad_id=0`
CODE_STYLE = "cyan"

cjk_wrap.install()

out = Console(highlight=False)
out.soft_wrap = not out.is_terminal
err = Console(stderr=True, highlight=False, soft_wrap=True)


def marked(text: str, console: Console) -> str:
    """A message as rich markup: escaped, and each `code` span shown as code (the code style, its backticks dropped)
    where ``console`` shows styles; a pipe or NO_COLOR keeps the backticks, the only mark of code left there."""
    if "`" not in text or console.color_system is None or console.no_color:
        return escape(text)
    parts = CODE_SPAN.split(text)  # prose, code, prose, ...
    return "".join(escape(part) if i % 2 == 0 else f"[{CODE_STYLE}]{escape(part)}[/]" for i, part in enumerate(parts))
