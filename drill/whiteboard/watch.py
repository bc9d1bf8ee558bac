"""Notice saves of one file by polling: stdlib only, and it works with every editor.

(mtime, size) is cheap to poll every ~0.2 s; a change is confirmed by the content hash, so a
touch or an editor's save-without-change does not re-grade. A file caught mid-write (its stat
still moving) or briefly missing (an atomic rename) is looked at again on the next poll.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

SETTLE_S = 0.05


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class FileWatcher:
    def __init__(self, path: Path):
        self.path = path
        self._stat, self._hash = _stat(path), _digest(path)

    def changed(self) -> bool:
        """True once per new content of the file since the last call."""
        stat = _stat(self.path)
        if stat is None or stat == self._stat:
            return False
        time.sleep(SETTLE_S)
        if _stat(self.path) != stat:
            return False  # still being written
        self._stat = stat
        digest = _digest(self.path)
        if digest is None or digest == self._hash:
            return False
        self._hash = digest
        return True
