"""Whiteboard watch mode: a re-grade after a save must take under 0.2 s on CPU (sdpa), and the
report must be on screen under 1 s after the save.

Starts the warm judge as ``drill whiteboard`` does (judge and zygote with torch imported, warmed
up on the reference solution), then re-grades saved files, each in a fresh user side forked from
the zygote, and prints the median wall time of a passing and of a failing save, plus the
watcher's polling delay (POLL_S / 2 on average).
Run: python benchmarks/bench_regrade.py [--runs N] [--task sdpa]. Exits 1 over budget.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drill.grade.run import make_request  # noqa: E402
from drill.grade.warm import WarmGrader  # noqa: E402
from drill.whiteboard import catalog  # noqa: E402
from drill.whiteboard.session import GRADE_TIMEOUT_S, POLL_S  # noqa: E402

REGRADE_BUDGET_S = 0.2
BUDGET_S = 1.0


def median_regrade(grader: WarmGrader, path: Path, text: str, task: str, runs: int) -> float:
    times = []
    for i in range(runs):
        path.write_text(f"{text}\n# save {i}\n")
        started = time.perf_counter()
        grader.grade(make_request(path, task=task, device="cpu"), GRADE_TIMEOUT_S)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


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
        passing = median_regrade(grader, path, solution, args.task, 1)  # waits for the worker
        ready = time.perf_counter() - started
        passing = median_regrade(grader, path, solution, args.task, args.runs)
        failing = median_regrade(grader, path, wrong, args.task, args.runs)
    worst = max(passing, failing) + POLL_S / 2
    print(f"judge start + warm-up           {ready:.2f} s (once per session)")
    print(f"re-grade {args.task}, passing save   median {passing:.3f} s")
    print(f"re-grade {args.task}, failing save   median {failing:.3f} s")
    print(f"re-grade budget                 {REGRADE_BUDGET_S:.1f} s")
    print(f"save -> report (+ {POLL_S / 2:.1f} s poll)   {worst:.3f} s (budget {BUDGET_S:.1f} s)")
    return 0 if worst <= BUDGET_S and max(passing, failing) < REGRADE_BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
