"""Compiled copies of parsed files in the user data folder, so that unchanged sources load without their parser.

Like a ``.pyc``: an entry is used only while its key (drill's version and the state of its sources)
matches; any edit or upgrade sends the sources through their parser again. An optimisation only:
a missing, stale or unreadable entry is a miss, and a failed write is ignored. The bank stores typed
questions with msgspec (drill.bank.cache); YAML documents are plain data and use marshal, which needs
no import on the start-up path.
"""

from __future__ import annotations

import marshal
import os
import zlib
from collections.abc import Callable, Iterator
from importlib.util import source_hash
from io import BytesIO, TextIOWrapper
from pathlib import Path
from typing import Any

from drill.version import __version__
from drill.errors import DrillError
from drill.paths import data_home


def folder() -> Path:
    return data_home() / "cache"


def read(entry: Path, key: str, loads: Callable[[bytes], Any] = marshal.loads) -> Any | None:
    """The value written to ``entry`` under ``key``; None if it is missing, unreadable, corrupt or has another key."""
    try:
        stored, value = loads(entry.read_bytes())
    except (OSError, EOFError, ValueError, TypeError, MemoryError):  # corrupt data (msgspec's errors are ValueErrors)
        return None
    return value if stored == f"{__version__}|{key}" else None


def write(entry: Path, key: str, value: Any, dumps: Callable[[Any], bytes] = marshal.dumps) -> None:
    partial = entry.with_suffix(f".{os.getpid()}.tmp")
    try:
        data = dumps((f"{__version__}|{key}", value))  # ValueError: a type marshal cannot store (a YAML date)
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, entry)  # readers never see a half-written entry
    except (OSError, ValueError):
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass


def yaml_documents(name: str, root: Path, paths: list[Path]) -> Iterator[tuple[Path, Any]]:
    """Each of ``paths`` with its YAML document (PyYAML's safe loader), parsed only if a file changed since the last time.

    The key holds every file's content hash (the one hash-based ``.pyc`` files are checked with), so an
    edit is seen however quickly it follows the last load. The entry is written once every document
    was handed out (a caller that stops at a bad file writes none). Without a usable data folder
    every call parses.
    """
    raws = [path.read_bytes() for path in paths]
    key = "\n".join(f"{path}:{source_hash(raw).hex()}" for path, raw in zip(paths, raws))
    try:
        entry = folder() / "yaml" / f"{name}-{zlib.crc32(str(root).encode()):08x}.marshal"
    except DrillError:
        entry = None
    cached = read(entry, key) if entry else None
    if cached is not None:
        yield from zip(paths, cached)
        return
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    documents = []
    for path, raw in zip(paths, raws):
        documents.append(yaml.load(TextIOWrapper(BytesIO(raw), encoding="utf-8").read(), Loader=loader))  # as read_text
        yield path, documents[-1]
    if entry:
        write(entry, key, documents)
