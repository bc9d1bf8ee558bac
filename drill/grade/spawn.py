"""Start the zygote process (drill/grade/user/zygote.py): forked from the judge, or as a new interpreter.

The judge imports torch first thing and forks its zygote from there (:func:`fork_zygote`), before
it imports any of its own grading code or reads a request: one grade pays for one torch import, not
two. A zygote that has to be replaced later, or one for a process that is not a fresh judge (a
test acting as the judge), is a new interpreter (:func:`start_zygote`) that imports torch itself.
"""

from __future__ import annotations

import os
import runpy
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

from drill.grade.user import sandbox

ZYGOTE_SCRIPT = Path(__file__).resolve().parent / "user" / "zygote.py"
PRELOADABLE = ("triton",)  # what a zygote may import for its user sides (interpreted Triton): never another name


def start_zygote(threads: int | None) -> tuple[subprocess.Popen, socket.socket]:
    """The zygote's process and our end of its control socket; it answers ``ready`` once torch is in."""
    control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(
        [sys.executable, str(ZYGOTE_SCRIPT), str(os.getpid())],
        stdin=theirs.fileno(),  # the control socket: no descriptor number on the command line
        env=env,
    )
    theirs.close()
    return proc, control


def fork_zygote(preload: list[str] = ()) -> tuple[Forked, socket.socket]:
    """Fork this process into the zygote, as :func:`start_zygote` would start it. Only for the judge, right
    after its ``import torch`` (which the zygote then shares): single-threaded, holding no request yet, and
    with no grading code imported, only drill's torch-free modules, which the child drops before the script."""
    control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(theirs.fileno(), 0)  # the control socket as stdin, as for a started zygote
            control.close()
            theirs.close()
            sandbox.close_descriptors(keep=())  # the judge's request and result channels among them
            for name in [m for m in sys.modules if m == "drill" or m.startswith("drill.")]:
                del sys.modules[name]  # so `import drill` in the user's file meets the rule, not a cached module
            sys.argv = [str(ZYGOTE_SCRIPT), str(parent), *[name for name in preload if name in PRELOADABLE]]
            runpy.run_path(str(ZYGOTE_SCRIPT), run_name="__main__")  # serves until the judge goes
        except BaseException:  # noqa: BLE001 - as a started zygote would: say why on stderr
            traceback.print_exc()
        finally:
            os._exit(1)
    theirs.close()
    return Forked(pid), control


class Forked:
    """A child forked by this process, with the part of :class:`subprocess.Popen` the judge uses."""

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (the judge's kill_children)
                self.returncode = 0
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"zygote {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
