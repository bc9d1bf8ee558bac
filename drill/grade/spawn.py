"""Start the zygote process (drill/grade/user/zygote.py) without importing torch.

The judge calls :func:`start_zygote` first thing, so the zygote imports torch while the judge
imports torch and loads its task: the two imports overlap instead of following each other.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ZYGOTE_SCRIPT = Path(__file__).resolve().parent / "user" / "zygote.py"


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
