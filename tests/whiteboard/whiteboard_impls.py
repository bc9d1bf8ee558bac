"""Paths of the whiteboard fixtures: real files, one implementation each."""

from __future__ import annotations

from pathlib import Path

IMPLS = Path(__file__).parent / "impls"
CORRECT = sorted((IMPLS / "correct").glob("*.py"))
BROKEN = sorted((IMPLS / "broken").glob("*.py"))
HOSTILE = IMPLS / "hostile"


def expected_code(path: Path) -> str:
    """broken/<code>__<n>.py must be diagnosed as <code>."""
    return path.stem.split("__")[0]
