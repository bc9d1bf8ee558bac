"""Time of the real ``drill stats`` (and ``--json``, ``drill streak``) on 100,000 attempts (issue: < 0.5 s).

Builds the database in a temporary DRILL_HOME, then runs each command in a fresh
subprocess several times and reports the median wall time, process start included.

Run: python benchmarks/bench_stats.py [--attempts N] [--runs K]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill.history.store import connect  # noqa: E402

TOPICS = [f"topic-{i}" for i in range(24)]
LEVELS = ("L1", "L2", "L3")
TYPES = ("open", "choice", "numeric", "shape")
BUDGET_S = 0.5


def populate(home: Path, attempts: int) -> None:
    """Two years of practice: random days, times and zones, one in eight answers timed out."""
    os.environ["DRILL_HOME"] = str(home)
    conn = connect()
    rng = random.Random(0)
    start = datetime(2023, 1, 1)
    rows = []
    for i in range(attempts):
        local = start + timedelta(minutes=rng.randrange(2 * 365 * 24 * 60))
        offset = rng.choice((-480, -300, 0, 60, 330, 480, 540))
        kind = TYPES[i % 4]
        correct = None if kind == "open" else int(rng.random() < 0.7)
        rows.append((
            f"bench-{i}", f"q-{i % 3000}", "h", LEVELS[i % 3], TOPICS[i % 24], kind, "answer", correct, rng.randint(1, 4),
            rng.uniform(5, 200), rng.choice((30.0, 60.0, 120.0, None)), int(rng.random() < 0.125),
            (local - timedelta(minutes=offset)).replace(tzinfo=timezone.utc).isoformat(timespec="seconds"),
            local.isoformat(timespec="seconds"), offset,
        ))  # fmt: skip
    runs = [
        (f"bench-g{i}", f"task-{i % 8}", "f.py", "whiteboard", int(rng.random() < 0.6), rng.uniform(60, 1800),
         f"2024-01-{i % 28 + 1:02}T10:00:00+00:00", f"2024-01-{i % 28 + 1:02}T10:00:00", 0)
        for i in range(2000)
    ]  # fmt: skip
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO attempts (uid, question_id, question_hash, level, topic, type, answer, correct, rating, seconds, time_limit,"
        " timed_out, answered_at, local_time, utc_offset_min) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.executemany(
        "INSERT INTO grade_runs (uid, task, file, source, passed, seconds, run_at, local_time, utc_offset_min) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        runs,
    )
    conn.execute("COMMIT")
    conn.close()


def in_process(runs: int) -> float:
    """Median of the command's own work (queries, maths, rendering) without interpreter start."""
    from drill.history import stats
    from drill.views import console, stats_view

    console.out.file = open(os.devnull, "w")  # noqa: SIM115
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        conn = connect()
        stats_view.print_stats(stats.collect(conn), as_json=False)
        conn.close()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_time(args: list[str], runs: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of the real command; CPU time stays honest on a loaded machine."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "drill", *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "120"})
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def _python_start() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        t0 = time.perf_counter()
        populate(Path(home), args.attempts)
        print(f"built {args.attempts:,} attempts in {time.perf_counter() - t0:.1f} s")
        python = statistics.median(_python_start() for _ in range(args.runs))
        print(f"python -c pass                     {python:.3f} s (this machine's interpreter start)")
        print(f"drill --version                    {median_time(['--version'], args.runs)[0]:.3f} s")
        worst = 0.0
        for cmd in (["stats"], ["stats", "--json"], ["streak"]):
            wall, cpu = median_time(cmd, args.runs)
            worst = max(worst, wall) if cmd[0] == "stats" else worst
            print(f"drill {' '.join(cmd):<28} {wall:.3f} s wall, {cpu:.3f} s CPU (median of {args.runs})")
        print(f"stats in-process (no start-up)     {in_process(args.runs):.3f} s")
        verdict = "ok" if worst < BUDGET_S else "OVER BUDGET"
        print(f"drill stats: {worst:.3f} s vs budget {BUDGET_S} s: {verdict}")
        sys.exit(0 if worst < BUDGET_S else 1)


if __name__ == "__main__":
    main()
