"""Run a quiz loop in the current process: pick the reader for this stdin, render, report an exit code.

Shared by ``drill quiz``, ``drill review`` and ``drill mock`` so that the CLI only
parses options. prompt_toolkit is imported only when stdin and stdout are a terminal.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from contextlib import contextmanager
from typing import Iterator

from drill.practice import quiz
from drill.errors import ExitCode
from drill.text.messages import Msg
from drill.views.console import err, out
from drill.views.quiz_view import QuizView, print_json

INTERRUPTED = 130  # the shell convention for Ctrl-C, so `while drill quiz; do ...` loops stop


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


@contextmanager
def _hangup_as_interrupt() -> Iterator[None]:
    """A closed terminal ends the quiz like Ctrl-C (session marked incomplete) instead of killing it."""

    def hang_up(signum, frame):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        raise quiz.Hangup

    previous = signal.signal(signal.SIGHUP, hang_up) if hasattr(signal, "SIGHUP") else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGHUP, previous)


def _streak(conn: sqlite3.Connection) -> Msg | None:
    from drill.history.streak import streak_line

    return streak_line(conn)


def exit_code(summary: quiz.Summary, fail_under: float | None = None) -> int:
    """0 for a session played to its end whatever the score (a wrong answer is the practice, not a failure
    of the command); 1 when it ended early, or scored under ``fail_under`` percent; 130 on Ctrl-C."""
    if summary.stopped == "interrupt":
        return INTERRUPTED
    if not summary.complete:
        return int(ExitCode.FAILED)
    if fail_under is not None:
        score = 100 * sum(r.passed for r in summary.results) / max(1, len(summary.results))
        return int(ExitCode.FAILED if score < fail_under else ExitCode.OK)
    return int(ExitCode.OK)


def play(
    conn: sqlite3.Connection,
    questions: list,
    settings: quiz.Settings,
    *,
    lang: str,
    as_json: bool,
    kind: str,
    options: dict,
    stop_at: float | None = None,
    fail_under: float | None = None,
) -> int:
    """Ask ``questions``, print the summary (table, or JSON on stdout), return the exit code."""
    tty = interactive()
    view = QuizView(err if as_json else out, lang, tty)
    if tty:
        from drill.practice.terminal_input import TerminalReader

        reader = TerminalReader(lang, stop_at)
    else:
        from drill.practice.line_input import LineReader

        reader = LineReader()
    with _hangup_as_interrupt():
        summary = quiz.run(conn, questions, reader, view, settings, kind=kind, options=options, stop_at=stop_at, lang=lang)
    try:
        if as_json:
            print_json(summary, lang)
        else:
            view.summary(summary, _streak(conn), options.get("minutes"))
    except OSError:
        pass  # the terminal is gone; everything is already saved
    return exit_code(summary, fail_under)
