"""One domain exception for the whole package, mapped to an exit code at the CLI edge.

Core modules never print or exit; they raise :class:`DrillError` (or a subclass)
and ``drill.cli`` turns it into a one-line message on stderr, in the user's language, and an exit code.
"""

from __future__ import annotations

from enum import IntEnum

from drill.text.messages import Msg


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # a quiz or grade ran and did not pass
    USAGE = 2  # bad input: usage, a broken bank, a missing file, an unusable device
    INTERRUPTED = 130  # Ctrl-C, the shell convention


class DrillError(Exception):
    """An expected failure with a message meant for the user: a message id (the English template) with named
    parameters, e.g. ``DrillError("no question with id {id!r}", id=qid)``; ``str(exc)`` is the English text."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, *, exit_code: ExitCode | None = None, **params: object):
        self.message = message if isinstance(message, Msg) and not params else Msg(message, **params)
        super().__init__(str(self.message))
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def lines(self) -> list[str]:
        """The message as the lines to print on stderr (Msg: each can be rendered in another language)."""
        return [self.message]


class BankError(DrillError):
    """A bank failed to load; carries every problem found, each ``file:line: message``."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(problems[0] if problems else Msg("invalid bank"))

    @property
    def lines(self) -> list[str]:
        return list(self.problems)


class StorageError(DrillError):
    """The database could not be written or read (a full disk, a damaged or locked file)."""
