"""Where drill keeps user data and finds the bundled bank."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def data_home() -> Path:
    """The user data folder: ``$DRILL_HOME`` if set, else platformdirs' user data dir."""
    override = os.environ.get("DRILL_HOME")
    if override:
        path = Path(override).expanduser()
    else:
        import platformdirs

        path = Path(platformdirs.user_data_dir("drill", appauthor=False))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from drill.errors import DrillError
        from drill.text.messages import Msg

        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        reason = Msg("{path} is a file, not a folder", path=str(blocker)) if blocker else (exc.strerror or str(exc))
        source = Msg("DRILL_HOME {path}", path=str(path)) if override else Msg("the data folder {path}", path=str(path))
        raise DrillError("{source} cannot be used: {reason}; point DRILL_HOME at a folder", source=source, reason=reason) from None
    return path


def db_path() -> Path:
    return data_home() / "drill.db"


def bundled_bank_dir() -> Path:
    """The bundled bank: inside the package in a wheel, the top-level folder in a checkout."""
    for candidate in (PACKAGE_DIR / "questions", PACKAGE_DIR.parent / "questions"):
        if candidate.is_dir():
            return candidate
    from drill.errors import DrillError

    raise DrillError("the bundled question bank is missing from {path}: reinstall drill", path=str(PACKAGE_DIR))


def extra_bank_paths() -> list[Path]:
    """Banks named in ``$DRILL_BANKS`` (an ``os.pathsep``-separated list)."""
    raw = os.environ.get("DRILL_BANKS", "")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip()]
