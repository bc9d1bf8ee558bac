"""``drill doctor``: one labelled line per fact, in the user's language."""

from __future__ import annotations

from rich.cells import cell_len
from rich.markup import escape

from drill.views.console import out

LABELS = {
    "drill": ("drill", "drill"),
    "python": ("python", "Python"),
    "home": ("data home", "数据目录"),
    "banks": ("banks", "题库"),
    "torch": ("torch", "torch"),
    "cuda": ("cuda", "CUDA"),
}
WORDS = {
    "questions": ("{n} questions", "{n} 道题"),
    "broken": ("[red]broken[/]: {why}", "[red]无法加载[/]：{why}"),
    "no_torch": ("not installed (needed only by drill grade)", "未安装（只有 drill grade 需要）"),
    "cuda_yes": ("yes ({name})", "可用（{name}）"),
    "cuda_no": ("no (torch build: {build})", "不可用（torch 构建：{build}）"),
    "cpu_only": ("CPU only", "仅 CPU"),
    "cuda_slow": ("unknown: torch took over {seconds} s to start in a child process", "未知：子进程里启动 torch 超过了 {seconds} 秒"),
}


def word(key: str, lang: str, **values) -> str:
    return WORDS[key][lang == "zh"].format(**values)


def line(key: str, value: str, lang: str) -> None:
    label = LABELS[key][lang == "zh"]
    out.print(f"{label}{' ' * (11 - cell_len(label))}{value}")


def print_sources(bank, lang: str) -> None:
    for path in bank.files:
        n = sum(1 for p, _ in bank.origins.values() if p == path)
        out.print(f"  {escape(str(path))}  [dim]({word('questions', lang, n=n)})[/]")
