"""Styled text written without rich.console, for the screens on the start-up budget (bare ``drill``, ``bank list``).

Importing rich.console with drill's console setup costs about a quarter of a bare start, more than
these screens' own work; they write the SGR escape codes rich would write for the same styles (tests
hold the two byte-equal), and nothing on a dumb terminal or when piped.
"""

from __future__ import annotations

import os
import shutil
import sys

COLOUR = {"bold cyan": "1;36", "bold green": "1;32", "dim": "2", "bold": "1", "green": "32", "yellow": "33", "red": "31"}  # rich's SGR codes
MONO = {"bold cyan": "1", "bold green": "1", "dim": "2", "bold": "1"}  # NO_COLOR: rich drops the colours, keeps bold and dim


def styled_stdout() -> bool:
    """Whether rich would style stdout: a terminal, or colour forced as rich honours it."""
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR")) or bool(os.environ.get("TTY_COMPATIBLE"))


def codes() -> dict[str, str]:
    """The escape codes rich would use on stdout: none piped or on a dumb terminal, no colours under NO_COLOR."""
    if not styled_stdout() or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return {}
    return MONO if os.environ.get("NO_COLOR", "") != "" else COLOUR


def paint(text: str, style: str, styles: dict[str, str]) -> str:
    code = styles.get(style)
    return f"\x1b[{code}m{text}\x1b[0m" if code else text


def width() -> int | None:
    """The terminal's width for wrapping, None when stdout is no terminal (piped text is never wrapped)."""
    if not sys.stdout.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else shutil.get_terminal_size().columns
