"""A compiled copy of each valid bank file, so a known bank loads without parsing YAML.

Like a ``.pyc``: keyed by the file's path, size and modification time and by drill's
version, so any edit (or upgrade) sends the file through full validation again. The
cache is an optimisation only: a missing, stale or unreadable entry is a miss, and a
failed write is ignored.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import msgspec

from drill import __version__
from drill.bank.schema import Question
from drill.paths import data_home


class _Entry(msgspec.Struct, gc=False):
    key: str
    questions: list[Question]


def _key(path: Path, stat: os.stat_result) -> str:
    return f"{__version__}|{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _entry_path(path: Path) -> Path:
    resolved = str(path.resolve())
    return data_home() / "cache" / "banks" / f"{path.stem}-{zlib.crc32(resolved.encode()):08x}.msgpack"


def load(path: Path, stat: os.stat_result) -> list[Question] | None:
    try:
        entry = msgspec.msgpack.decode(_entry_path(path).read_bytes(), type=_Entry)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return entry.questions if entry.key == _key(path, stat) else None


def save(path: Path, stat: os.stat_result, questions: list[Question]) -> None:
    target = _entry_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(msgspec.msgpack.encode(_Entry(_key(path, stat), questions)))
        os.replace(partial, target)  # readers never see a half-written entry
    except OSError:
        pass
