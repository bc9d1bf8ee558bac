"""The command line: parse options, call the library, render with rich.

Every command is a thin wrapper registered with :func:`command`, which gives it a
one-line help with an example and maps :class:`~drill.errors.DrillError` to an exit
code. Heavy modules (torch, prompt_toolkit) are imported inside the commands that
need them so that ``drill bank list`` starts fast.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from drill import __version__
from drill.errors import DrillError, ExitCode

app = typer.Typer(
    name="drill",
    help="Practice for LLM / Transformer interviews: timed quizzes, a whiteboard grader for attention code, streaks.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
bank_app = typer.Typer(help="Inspect and validate question banks. Example: drill bank list --level L2", no_args_is_help=True)
app.add_typer(bank_app, name="bank")

_state = {"debug": False}


def _fail(exc: DrillError) -> None:
    from drill.views.console import err

    for line in exc.lines:
        err.print(f"[red]error:[/] {line}" if len(exc.lines) == 1 else line, markup=len(exc.lines) == 1)
    raise typer.Exit(int(exc.exit_code))


def command(group: typer.Typer, name: str, *, example: str):
    """Register ``fn`` as ``name`` on ``group``, with an example and domain-error mapping."""

    def decorate(fn):
        summary = (fn.__doc__ or "").strip().splitlines()[0]

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except DrillError as exc:
                if _state["debug"]:
                    raise
                _fail(exc)

        return group.command(name, short_help=f"{summary} Example: {example}", epilog=f"Example: {example}")(guarded)

    return decorate


def split_values(values: Optional[list[str]]) -> list[str]:
    """Accept both ``--level L1 --level L2`` and ``--level L1,L2``."""
    return [v.strip() for raw in values or [] for v in raw.split(",") if v.strip()]


BankOpt = Annotated[Optional[list[Path]], typer.Option("--bank", help="Extra bank file or folder (repeatable); also $DRILL_BANKS.")]
LevelOpt = Annotated[Optional[list[str]], typer.Option("--level", "-l", help="L1, L2 or L3 (repeatable or comma list).")]
TopicOpt = Annotated[Optional[list[str]], typer.Option("--topic", "-t", help="Topic slug (repeatable or comma list).")]
LangOpt = Annotated[Optional[str], typer.Option("--lang", help="Content language: en or zh (default: config, then locale).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def resolve_lang(lang: Optional[str]) -> str:
    from drill.lang import LANGS, resolve

    if lang is not None and lang not in LANGS:
        raise typer.BadParameter(f"{lang!r} is not one of {', '.join(LANGS)}", param_hint="--lang")
    return resolve(lang)


def _version(value: bool) -> None:
    if value:
        print(f"drill {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for errors.")] = False,
) -> None:
    _state["debug"] = debug


# --- bank -------------------------------------------------------------------


@command(bank_app, "list", example="drill bank list --level L2 --topic masks")
def bank_list(level: LevelOpt = None, topic: TopicOpt = None, as_json: JsonOpt = False, bank: BankOpt = None) -> None:
    """List the questions of every loaded bank."""
    from drill.bank.load import load_bank
    from drill.views import bank_view

    questions = load_bank(bank).select(levels=split_values(level), topics=split_values(topic))
    bank_view.print_list(questions, as_json)


@command(bank_app, "show", example="drill bank show attn-why-sqrt-dk --lang zh")
def bank_show(question_id: Annotated[str, typer.Argument(help="Question id.")], lang: LangOpt = None, bank: BankOpt = None) -> None:
    """Show one question with its answer, key points and follow-ups."""
    from drill.bank.load import load_bank
    from drill.views import bank_view

    bank_view.print_question(load_bank(bank).get(question_id), resolve_lang(lang))


@command(bank_app, "validate", example="drill bank validate my_bank/")
def bank_validate(paths: Annotated[list[Path], typer.Argument(help="Bank files or folders.")]) -> None:
    """Check banks; print every problem as file:line: message."""
    from drill.bank.load import default_paths, load_paths
    from drill.views.console import out

    loaded = load_paths(default_paths(paths))
    out.print(f"ok: {len(loaded.questions)} questions in {len(loaded.files)} files")


@command(bank_app, "stats", example="drill bank stats --markdown > docs/bank-coverage.md")
def bank_stats(markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False, bank: BankOpt = None) -> None:
    """Count questions by topic, level and type."""
    from drill.bank.load import load_bank
    from drill.bank.stats import coverage
    from drill.views import bank_view

    bank_view.print_coverage(coverage(load_bank(bank)), markdown)


# --- doctor -----------------------------------------------------------------


@command(app, "doctor", example="drill doctor")
def doctor(bank: BankOpt = None) -> None:
    """Show the data folder, loaded banks, Python, torch and CUDA."""
    import platform

    from drill.bank.load import load_bank
    from drill.paths import data_home
    from drill.views import bank_view
    from drill.views.console import out

    out.print(f"drill      {__version__}")
    out.print(f"python     {platform.python_version()} ({sys.executable})")
    out.print(f"data home  {data_home()}")
    try:
        loaded = load_bank(bank)
        out.print(f"banks      {len(loaded.questions)} questions")
        bank_view.print_sources(loaded)
    except DrillError as exc:
        out.print(f"banks      [red]broken[/]: {exc.lines[0]}")
    try:
        import torch
    except ImportError:
        out.print("torch      not installed (needed only by drill grade)")
    else:
        cuda = torch.cuda.is_available()
        detail = f"yes ({torch.cuda.get_device_name(0)})" if cuda else f"no (torch build: {torch.version.cuda or 'CPU only'})"
        out.print(f"torch      {torch.__version__}")
        out.print(f"cuda       {detail}")


def main() -> None:
    app()
