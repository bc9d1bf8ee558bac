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
    """The last ``keep`` frames of the traceback that are in the user's file."""
    target = str(path.resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == target]
    return "; ".join(f"{path.name}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-keep:])


def describe_exception(exc: BaseException, path: Path) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})" + _at(exc, path)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    head = f"raised {type(exc).__name__}" + (f": {text}" if text else "")
    return head + _at(exc, path)


def _at(exc: BaseException, path: Path) -> str:
    where = user_frames(exc, path)
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
