"""The two consoles every view writes to (with line breaks inside Chinese text: drill.views.cjk_wrap).

Piped stdout is not wrapped: a script or a file gets each line whole, never cut mid-sentence at
rich's default 80 columns (tables and panels still lay out at that width).
"""

from rich.console import Console

from drill.views import cjk_wrap

cjk_wrap.install()

out = Console(highlight=False)
out.soft_wrap = not out.is_terminal
err = Console(stderr=True, highlight=False, soft_wrap=True)
