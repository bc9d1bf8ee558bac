"""A compiled copy of each valid bank file, so a known bank loads without parsing YAML.

Keyed by the file's path, size and modification time (and drill's version, see drill.compiled),
so any edit (or upgrade) sends the file through full validation again.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import msgspec

from drill import compiled
from drill.bank.schema import Question

_decode = msgspec.msgpack.Decoder(tuple[str, list[Question]]).decode


def _key(real: Path, stat: os.stat_result) -> str:
    return f"{real}|{stat.st_size}|{stat.st_mtime_ns}"


def _entry_path(real: Path) -> Path:
    return compiled.folder() / "banks" / f"{real.stem}-{zlib.crc32(str(real).encode()):08x}.msgpack"


def load(real: Path, stat: os.stat_result) -> list[Question] | None:
    """The cached questions of the file at ``real`` (its resolved path, resolved once by the caller: it costs a stat per folder)."""
    return compiled.read(_entry_path(real), _key(real, stat), _decode)


def save(real: Path, stat: os.stat_result, questions: list[Question]) -> None:
    compiled.write(_entry_path(real), _key(real, stat), questions, msgspec.msgpack.encode)
