"""Grade-time cost of the judge sandbox (issue 27; budget: +0.1 s per grade).

The sandbox adds, per grade, what the forked user side does before it imports the user's file:
close drill's descriptors, enter a user namespace, apply Landlock (drill.grade.user.sandbox),
plus the zygote's private temporary folder (made before the fork, removed at the reap). Timed
here as fork + those steps + exit, against a bare fork + exit, from this process (no torch: the
steps do not depend on what the process holds). The CLI's other additions (prctl, one look at the
judge's state every 0.25 s while it is silent) cost microseconds.

Run: python benchmarks/bench_sandbox.py [REPEATS]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drill.grade.user import sandbox  # noqa: E402


def fork_once(confined: bool) -> float:
    start = time.perf_counter()
    private = tempfile.mkdtemp(prefix="drill-user-") if confined else None
    pid = os.fork()
    if pid == 0:
        if confined:
            sandbox.close_descriptors(keep=())
            sandbox.confine(private)
        os._exit(0)
    os.waitpid(pid, 0)
    if private:
        shutil.rmtree(private)
    return time.perf_counter() - start


def main(repeats: int) -> None:
    print("protections:", ", ".join(f"{name}: {'active' if why is None else why}" for name, why in sandbox.available()))
    bare = statistics.median(fork_once(False) for _ in range(repeats))
    confined = statistics.median(fork_once(True) for _ in range(repeats))
    print(f"fork + exit:           {bare * 1e3:7.2f} ms (median of {repeats})")
    print(f"fork + sandbox + exit: {confined * 1e3:7.2f} ms")
    print(f"sandbox cost per grade: {(confined - bare) * 1e3:.2f} ms (budget 100 ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
