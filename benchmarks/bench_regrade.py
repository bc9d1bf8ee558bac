"""Whiteboard watch mode: from a save to its report on screen under 0.2 s on CPU (sdpa).

Starts the warm judge as ``drill whiteboard`` does (judge and zygote with torch imported, warmed
up on the reference solution), then saves files as editors do (in place, and write-then-rename)
under the session's watcher (watchfiles), and prints the median wall time of:
  - the watcher: save -> the change noticed (debounce included),
  - the re-grade of a passing and of a failing save, each in a fresh user side from the zygote,
  - save -> report (the slower of each), against the 0.2 s budget.
Also prints watchfiles' import time. Run: python benchmarks/bench_regrade.py [--runs N] [--task sdpa].
Exits 1 over budget.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drill.grade.run import make_request  # noqa: E402
from drill.grade.warm import WarmGrader  # noqa: E402
from drill.whiteboard import catalog  # noqa: E402
from drill.whiteboard.session import GRADE_TIMEOUT_S  # noqa: E402
from drill.whiteboard.watch import FileWatcher  # noqa: E402

REGRADE_BUDGET_S = 0.2


def save(path: Path, text: str, atomic: bool) -> None:
    if atomic:  # vim's backupcopy=no, VS Code, JetBrains "safe write"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    else:
        path.write_text(text)


def noticed(watcher: FileWatcher, path: Path, text: str, atomic: bool) -> float:
    """Seconds from the save until the watcher reports the new content."""
    started = time.perf_counter()
    save(path, text, atomic)
    while True:
        select.select([watcher.fileno()], [], [], 2.0)
        if watcher.changed():
            return time.perf_counter() - started
        if time.perf_counter() - started > 5:
            raise SystemExit("the watcher missed a save")


def median_regrade(grader: WarmGrader, path: Path, task: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        grader.grade(make_request(path, task=task, device="cpu"), GRADE_TIMEOUT_S)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def import_cost() -> float:
    code = "import time; t = time.perf_counter(); import watchfiles; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout) for _ in range(3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--task", default="sdpa")
    args = parser.parse_args()
    exercise = catalog.get(args.task)
    solution = exercise.solution.read_text()
    wrong = solution.replace(" / math.sqrt(q.size(-1))", "").replace(" / math.sqrt(hd)", "")
    started = time.perf_counter()
    with WarmGrader(warmup=make_request(exercise.solution, task=args.task, device="cpu")) as grader, tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.py"
        path.write_text(solution)
        median_regrade(grader, path, args.task, 1)  # waits for the worker
        ready = time.perf_counter() - started
        with FileWatcher(path) as watcher:
            watch = {atomic: statistics.median(noticed(watcher, path, f"{solution}\n# save {i}\n", atomic) for i in range(args.runs))
                     for atomic in (False, True)}  # fmt: skip
        passing = median_regrade(grader, path, args.task, args.runs)
        path.write_text(wrong)
        failing = median_regrade(grader, path, args.task, args.runs)
    regrade = max(passing, failing)
    worst = regrade + max(watch.values())
    print(f"judge start + warm-up           {ready:.2f} s (once per session)")
    print(f"import watchfiles               {import_cost() * 1000:.0f} ms (whiteboard sessions only)")
    print(f"save -> noticed, in place       median {watch[False]:.3f} s")
    print(f"save -> noticed, atomic rename  median {watch[True]:.3f} s")
    print(f"re-grade {args.task}, passing save   median {passing:.3f} s")
    print(f"re-grade {args.task}, failing save   median {failing:.3f} s")
    print(f"save -> report                  {worst:.3f} s (budget {REGRADE_BUDGET_S:.1f} s)")
    return 0 if worst < REGRADE_BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
