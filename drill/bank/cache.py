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


def _key(real: Path, stat: os.stat_result) -> str:
    return f"{__version__}|{real}|{stat.st_size}|{stat.st_mtime_ns}"


def _entry_path(real: Path) -> Path:
    return data_home() / "cache" / "banks" / f"{real.stem}-{zlib.crc32(str(real).encode()):08x}.msgpack"


def load(real: Path, stat: os.stat_result) -> list[Question] | None:
    """The cached questions of the file at ``real`` (its resolved path, resolved once by the caller: it costs a stat per folder)."""
    try:
        entry = msgspec.msgpack.decode(_entry_path(real).read_bytes(), type=_Entry)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return entry.questions if entry.key == _key(real, stat) else None


def save(real: Path, stat: os.stat_result, questions: list[Question]) -> None:
    target = _entry_path(real)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(msgspec.msgpack.encode(_Entry(_key(real, stat), questions)))
        os.replace(partial, target)  # readers never see a half-written entry
    except OSError:
        pass
