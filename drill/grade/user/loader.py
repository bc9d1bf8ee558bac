"""Import the user's file and turn whatever goes wrong into a message about their code.

Messages are drill's :class:`Ev` (an English template and its values, sent to the judge as data and shown in the
user's language): the judge's own class; in the zygote's private copy of this package, where ``import drill`` is
refused, the same module loaded by its path."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

if __package__ == "drill.grade.user":  # the judge, the CLI
    from drill.text.messages import Ev
else:
    _spec = importlib.util.spec_from_file_location(f"{__package__}.messages", Path(__file__).resolve().parents[2] / "text" / "messages.py")
    _messages = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_messages)
    Ev = _messages.Ev


class UserCodeError(Exception):
    """The user's code raised (or exited); the message points at their own lines."""

    def __init__(self, message: Ev, original: BaseException):
        super().__init__(message)
        self.original = original


def user_frames(exc: BaseException, path: Path, keep: int = 3) -> Ev:
    """The last ``keep`` frames of the traceback that are in the user's file (following the
    exception's context: drill's code may have raised while handling the user's exception)."""
    target = str(path.resolve())
    frames, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == target] + frames
        exc = exc.__cause__ or exc.__context__
    return Ev.seq(Ev("{file}:{line} in {fn}: {code}", file=path.name, line=f.lineno, fn=f.name, code=(f.line or "").strip())
                  for f in frames[-keep:])  # fmt: skip


def exception_text(exc: BaseException) -> str:
    """The first line of ``str(exc)``; its ``__str__`` is the user's code and may raise or lie about its type.
    drill's own exceptions in the user's call (the kernel guard's, the import rule's) keep their message as data."""
    try:
        text = str(exc).strip()
    except BaseException as inner:  # noqa: BLE001 - a __str__ that raises
        return Ev("<its message could not be printed: __str__ raised {type}>", type=type_name(inner))
    text = text.splitlines()[0][:500] if text else ""
    text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate would break every JSON and terminal after
    args = BaseException.args.__get__(exc)  # no attribute of the user's: type() and ==, never isinstance or their methods
    return args[0] if len(args) == 1 and type(args[0]) is Ev and args[0] == text else text


def type_name(obj) -> str:
    try:
        return str(type.__dict__["__name__"].__get__(type(obj)))[:100]
    except BaseException:  # noqa: BLE001
        return "?"


def describe_exception(exc: BaseException, path: Path) -> Ev:
    if isinstance(exc, SystemExit):
        try:
            code = repr(exc.code)[:100]
        except BaseException:  # noqa: BLE001 - a code object whose __repr__ raises
            code = "..."
        return _at(exc, path, Ev("called sys.exit({code})", code=code))
    text = exception_text(exc)
    head = Ev("raised {type}: {text}", type=type_name(exc), text=text) if text else Ev("raised {type}", type=type_name(exc))
    return _at(exc, path, head)


def _at(exc: BaseException, path: Path, what: Ev) -> Ev:
    """``what`` and where in the user's file it happened."""
    try:
        where = user_frames(exc, path)
    except Exception:  # noqa: BLE001 - a traceback that cannot be read (no descriptor left for its lines)
        where = ""
    return Ev("{what} (at {where})", what=what, where=where) if where else what


def load_user_file(path: Path) -> ModuleType:
    """Execute the file as a fresh module; raise UserCodeError on any failure."""
    path = path.resolve()
    name = f"drill_user_{abs(hash((str(path), path.stat().st_mtime_ns)))}"
    # An explicit loader: without it a file not named *.py has no spec at all.
    spec = importlib.util.spec_from_file_location(name, path, loader=importlib.machinery.SourceFileLoader(name, str(path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise UserCodeError(Ev("syntax error at line {line}: {why}", line=exc.lineno, why=exc.msg), exc) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of the user's import is reported
        raise UserCodeError(Ev("importing {file} {what}", file=path.name, what=describe_exception(exc, path)), exc) from None
    finally:
        sys.modules.pop(name, None)
    return module
