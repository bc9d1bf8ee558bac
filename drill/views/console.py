"""The two consoles every view writes to (with line breaks inside Chinese text: drill.views.cjk_wrap)."""

from rich.console import Console

from drill.views import cjk_wrap

cjk_wrap.install()

out = Console(highlight=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)
