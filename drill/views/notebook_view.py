"""What ``drill notebook`` prints: the files written and how to open them."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from drill.views.console import out

WORDS: dict[str, tuple[str, str]] = {
    "written": ("wrote [bold]{path}[/]", "已写入 [bold]{path}[/]"),
    "plan": ("wrote {n} notebooks to [bold]{folder}[/] (start with {first})", "已在 [bold]{folder}[/] 写入 {n} 个笔记本（从 {first} 开始）"),
    "kept": ("kept {n} that exist already (never overwritten)", "保留了已存在的 {n} 个（从不覆盖）"),
    "open": ("Open it with: jupyter lab {path}   (or upload it to Colab: its first cell installs drill)",
             "打开方式：jupyter lab {path}   （或上传到 Colab：第一格会安装 drill）"),
}


def _say(key: str, lang: str, **values: object) -> str:
    return WORDS[key][lang == "zh"].format(**{k: escape(str(v)) for k, v in values.items()})


def print_written(path: Path, lang: str) -> None:
    out.print(_say("written", lang, path=path))
    out.print(f"[dim]{_say('open', lang, path=path)}[/]")


def print_plan(folder: Path, written: list[Path], kept: list[Path], lang: str) -> None:
    first = min(written + kept).name
    out.print(_say("plan", lang, n=len(written), folder=folder, first=first))
    if kept:
        out.print(_say("kept", lang, n=len(kept)))
    out.print(f"[dim]{_say('open', lang, path=folder / first)}[/]")
