"""Import the user's file and turn whatever goes wrong into a message about their code."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType


class UserCodeError(Exception):
    """The user's code raised (or exited); the message points at their own lines."""

    def __init__(self, message: str, original: BaseException):
        super().__init__(message)
        self.original = original


def user_frames(exc: BaseException, path: Path, keep: int = 3) -> str:
    """The last ``keep`` frames of the traceback that are in the user's file (following the
    exception's context: drill's code may have raised while handling the user's exception)."""
    target = str(path.resolve())
    frames, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == target] + frames
        exc = exc.__cause__ or exc.__context__
    return "; ".join(f"{path.name}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-keep:])


def exception_text(exc: BaseException) -> str:
    """The first line of ``str(exc)``; its ``__str__`` is the user's code and may raise or lie about its type."""
    try:
        text = str(exc).strip()
    except BaseException as inner:  # noqa: BLE001 - a __str__ that raises
        return f"<its message could not be printed: __str__ raised {type_name(inner)}>"
    text = text.splitlines()[0][:500] if text else ""
    return text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate would break every JSON and terminal after


def type_name(obj) -> str:
    try:
        return str(type.__dict__["__name__"].__get__(type(obj)))[:100]
    except BaseException:  # noqa: BLE001
        return "?"


def describe_exception(exc: BaseException, path: Path) -> str:
    if isinstance(exc, SystemExit):
        try:
            code = repr(exc.code)[:100]
        except BaseException:  # noqa: BLE001 - a code object whose __repr__ raises
            code = "..."
        return f"called sys.exit({code})" + _at(exc, path)
    text = exception_text(exc)
    head = f"raised {type_name(exc)}" + (f": {text}" if text else "")
    return head + _at(exc, path)


def _at(exc: BaseException, path: Path) -> str:
    try:
        where = user_frames(exc, path)
    except Exception:  # noqa: BLE001 - a traceback that cannot be read (no descriptor left for its lines)
        where = ""
    return f" (at {where})" if where else ""


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
        raise UserCodeError(f"syntax error at line {exc.lineno}: {exc.msg}", exc) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of the user's import is reported
        raise UserCodeError(f"importing {path.name} {describe_exception(exc, path)}", exc) from None
    finally:
        sys.modules.pop(name, None)
    return module
