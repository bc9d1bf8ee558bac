"""Single key presses without Enter, read with a timeout; a save (the watcher's fd) also ends the wait.

In a terminal stdin is put in cbreak mode (restored on exit); otherwise each line counts as
its first character, so the session can also be driven through a pipe.
"""

from __future__ import annotations

import os
import select
import sys
import time


class KeyReader:
    def __init__(self, stream=None):
        self._stream = stream or sys.stdin
        self._fd = self._stream.fileno()
        self._tty = os.isatty(self._fd)
        self._saved = None
        self._closed = False

    def __enter__(self) -> KeyReader:
        if self._tty:
            import termios
            import tty

            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    @property
    def closed(self) -> bool:
        """stdin has ended: no key will come."""
        return self._closed

    def read(self, timeout: float, wake=None) -> str | None:
        """The next key pressed within ``timeout`` seconds, lower-cased, or None (also as soon as ``wake`` is readable)."""
        fds = ([] if self._closed else [self._fd]) + ([wake] if wake is not None else [])
        if not fds:
            time.sleep(timeout)
            return None
        ready, _, _ = select.select(fds, [], [], timeout)
        if self._fd not in ready or self._closed:
            return None
        data = os.read(self._fd, 1 if self._tty else 4096)
        if not data:
            self._closed = True  # stdin ended: keep watching the file until a pass or the time limit
            return None
        return data[:1].decode("utf-8", "replace").lower()
