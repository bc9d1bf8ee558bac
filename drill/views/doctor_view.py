"""``drill doctor``: one labelled line per fact, in the user's language."""

from __future__ import annotations

from rich.cells import cell_len
from rich.markup import escape

from drill.text.i18n import text
from drill.text.messages import Msg, translated
from drill.views.console import out

LABELS = {
    "drill": "drill",
    "python": Msg("python"),
    "home": Msg("data home"),
    "banks": Msg("banks"),
    "torch": "torch",
    "cuda": Msg("cuda"),
    "sandbox": Msg("sandbox"),
    "triton": Msg("triton"),
}
PROTECTIONS = {  # drill.grade.user.sandbox.available()'s names: what each keeps from the code drill grades
    "non-dumpable drill processes": Msg("drill's processes closed to /proc (non-dumpable)"),
    "user namespace": Msg("graded code in its own user namespace"),
    "landlock writes": Msg("graded code writes only its temporary folder (Landlock)"),
    "landlock signals": Msg("graded code cannot signal drill's processes (Landlock)"),
}
WORDS = {
    "questions": Msg("{n} questions"),
    "broken": Msg("[red]broken[/]: {why}"),
    "no_torch": Msg("not installed (needed only by drill grade)"),
    "cuda_yes": Msg("yes ({name})"),
    "cuda_no": Msg("no (torch build: {build})"),
    "cpu_only": Msg("CPU only"),
    "no_triton": Msg("not installed (needed only by the kernels track: {how})"),
    "compiled": Msg("{version}: kernels compiled for the GPU"),
    "interpreted": Msg("{version}: kernels run under Triton's interpreter on CPU (no GPU here), graded but not timed"),
    "cuda_slow": Msg("unknown: torch took over {seconds} s to start in a child process"),
    "protections": Msg("{active}/{total} protections active"),
    "protection": Msg("{protection}: {state}"),
    "active": Msg("[green]active[/]"),
    "not_available": Msg("[yellow]not available[/]: {why}"),
}


def word(key: str, lang: str, **values) -> str:
    return text(WORDS[key], lang, **values)


def line(key: str, value: str, lang: str) -> None:
    label = translated(LABELS[key], lang)
    out.print(f"{label}{' ' * (11 - cell_len(label))}{value}")


def print_sandbox(protections: list[tuple[str, str | None]], lang: str) -> None:
    """One line per protection of ``drill grade``: active, or not available and why."""
    active = sum(why is None for _, why in protections)
    line("sandbox", word("protections", lang, active=active, total=len(protections)), lang)
    for name, why in protections:
        state = word("active", lang) if why is None else word("not_available", lang, why=escape(translated(why, lang)))
        out.print("  " + word("protection", lang, protection=translated(PROTECTIONS[name], lang), state=state))


def print_sources(bank, lang: str) -> None:
    for path in bank.files:
        n = sum(1 for p, _ in bank.origins.values() if p == path)
        out.print(f"  {escape(str(path))}  [dim]({word('questions', lang, n=n)})[/]")


def print_triton(version: str | None, gpu: bool, lang: str) -> None:
    """Whether the kernels track runs here, and how: compiled on a GPU, else interpreted on CPU."""
    from drill.grade.kernel_env import HOW_TO_GET

    if version is None:
        line("triton", word("no_triton", lang, how=escape(HOW_TO_GET)), lang)
    else:
        line("triton", word("compiled" if gpu else "interpreted", lang, version=escape(version)), lang)
