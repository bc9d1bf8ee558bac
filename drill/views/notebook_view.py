"""What ``drill notebook`` prints: the files written and how to open them."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from drill.text.i18n import text
from drill.text.messages import Msg
from drill.views.console import out

WORDS = {
    "written": Msg("wrote [bold]{path}[/]"),
    "plan": Msg("wrote {n} notebooks to [bold]{folder}[/] (start with {first})"),
    "kept": Msg("kept {n} that exist already (never overwritten)"),
    "open": Msg("Open it with: jupyter lab {path}   (or upload it to Colab: its first cell installs drill)"),
}


def _say(key: str, lang: str, **values: object) -> str:
    return text(WORDS[key], lang, **{k: escape(str(v)) for k, v in values.items()})


def print_written(path: Path, lang: str) -> None:
    out.print(_say("written", lang, path=path))
    out.print(f"[dim]{_say('open', lang, path=path)}[/]")


def print_plan(folder: Path, written: list[Path], kept: list[Path], lang: str) -> None:
    first = min(written + kept).name
    out.print(_say("plan", lang, n=len(written), folder=folder, first=first))
    if kept:
        out.print(_say("kept", lang, n=len(kept)))
    out.print(f"[dim]{_say('open', lang, path=folder / first)}[/]")
