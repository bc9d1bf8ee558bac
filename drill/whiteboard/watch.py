"""Notice saves of one file with ``watchfiles`` (Rust ``notify``: inotify, FSEvents, ReadDirectoryChangesW).

The folder is watched, not the file: an editor's atomic save (write ``x.py.tmp``, rename over
``x.py``) replaces the inode a file watch would follow. Events are debounced by watchfiles (it
yields once no event came for ``STEP_MS``), filtered to the file's name, and a change is
confirmed by the content hash, so a touch or a save without change does not re-grade.
A background thread waits on watchfiles and writes a byte to a pipe: :meth:`FileWatcher.fileno`
lets the session wait on keys and saves in one ``select`` instead of polling.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

STEP_MS = 30  # quiet time that ends a burst of events (an editor's write + rename + chmod)
DEBOUNCE_MS = 400  # a burst longer than this is reported anyway


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class FileWatcher:
    def __init__(self, path: Path):
        self.path = path
        self._hash = _digest(path)
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="drill-watch", daemon=True)
        self._thread.start()
        self._ready.wait(2.0)  # the watch is set up before the first save can happen

    def _watch(self) -> None:
        from watchfiles import watch  # ~30 ms, whiteboard sessions only

        folder, name = self.path.resolve().parent, self.path.name
        events = watch(folder, watch_filter=lambda _change, p: os.path.basename(p) == name, debounce=DEBOUNCE_MS,
                       step=STEP_MS, stop_event=self._stop, rust_timeout=200, yield_on_timeout=True, recursive=False,
                       raise_interrupt=False)  # fmt: skip
        for changes in events:
            self._ready.set()
            if changes and not self._stop.is_set():
                os.write(self._write_fd, b"!")

    def fileno(self) -> int:
        """Readable when the file may have changed: select() on it with the keyboard."""
        return self._read_fd

    def changed(self) -> bool:
        """True once per new content of the file since the last call."""
        try:
            if not os.read(self._read_fd, 4096):
                return False
        except BlockingIOError:
            return False
        digest = _digest(self.path)
        if digest is None or digest == self._hash:
            return False  # a touch, or the file briefly missing mid-rename (the rename's own event follows)
        self._hash = digest
        return True

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        os.close(self._read_fd)
        os.close(self._write_fd)

    def __enter__(self) -> FileWatcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
