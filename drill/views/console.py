"""The two consoles every view writes to."""

from rich.console import Console

out = Console(highlight=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)
