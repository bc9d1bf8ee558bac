"""Time the history-reading commands at 0, 10k, 100k and 1M attempts (issue: < 0.5 s and <= 3x at 100k, < 2 s at 1M).

Each history is generated as export files of at most 100k attempts and loaded with
``drill history import``, the project's own import path, into a DRILL_HOME cached under
the temporary folder (generating 1M attempts takes minutes; ``--rebuild`` starts over).
Every command then runs in a fresh subprocess with stdin from /dev/null, once to warm
the caches and ``--runs`` times measured; the median wall time is reported, process
start included, with its ratio to the same command on an empty history.

Run: python benchmarks/bench_history_scale.py [--sizes 0,10000,100000,1000000] [--runs 3] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill.bank.load import load_bundled  # noqa: E402

COMMANDS = {
    "drill (dashboard)": [],  # bare drill: today's plan with the forecast
    "mistakes": ["mistakes", "--lang", "en"],
    "quiz --count 1": ["quiz", "--count", "1", "--lang", "en"],
    "review --limit 1": ["review", "--limit", "1", "--lang", "en"],
    "stats": ["stats"],
    "streak": ["streak"],
    "tasks": ["tasks", "--lang", "en"],
    "doctor": ["doctor"],  # reads no history: flat by design
    "export anki --solved": ["export", "anki", os.devnull, "--solved"],  # one card per passed task, from grade_runs
}
CHUNK = 100_000
PER_SESSION = 20
GENERATOR = 1  # bump when the generated history changes, so cached homes are rebuilt
BUDGET = {100_000: 0.5, 1_000_000: 2.0}
MAX_RATIO = 3.0


def _chunk(bank: list, start: int, count: int, total: int, rng: random.Random, first_day: datetime, span_min: int) -> dict:
    """Attempts start .. start+count of ``total``, in sessions of PER_SESSION, in order over ``span_min`` minutes."""
    sessions, attempts, runs = [], [], []
    for i in range(start, start + count):
        local = first_day + timedelta(minutes=span_min * i // total, seconds=rng.randrange(60))
        offset = rng.choice((-300, 0, 60, 480))
        utc = (local - timedelta(minutes=offset)).replace(tzinfo=timezone.utc).isoformat(timespec="seconds")
        if i % PER_SESSION == 0:
            sessions.append({"ref": i // PER_SESSION, "uid": f"bench-s{i // PER_SESSION}", "kind": "quiz", "started_at": utc,
                             "ended_at": utc, "status": "complete", "options": "{}"})  # fmt: skip
        q = bank[i % len(bank)]
        correct = None if q.type == "open" else int(rng.random() < 0.7)
        attempts.append({
            "uid": f"bench-a{i}", "session_id": i // PER_SESSION, "question_id": q.id, "question_hash": "h", "level": q.level,
            "topic": q.topic, "type": q.type, "answer": "an answer", "correct": correct, "rating": rng.randint(1, 4),
            "seconds": round(rng.uniform(5, 200), 3), "time_limit": 60.0, "timed_out": int(rng.random() < 0.1),
            "answered_at": utc, "local_time": local.isoformat(timespec="seconds"), "utc_offset_min": offset,
        })  # fmt: skip
        if i % 100 == 0:
            runs.append({"uid": f"bench-g{i}", "task": rng.choice(("sdpa", "mha", "causal")), "file": "f.py", "source": "whiteboard",
                         "passed": int(rng.random() < 0.5), "codes": "[]", "seconds": 600.0, "run_at": utc,
                         "local_time": local.isoformat(timespec="seconds"), "utc_offset_min": offset})  # fmt: skip
    return {"format": "drill-history", "version": 1, "sessions": sessions, "attempts": attempts, "grade_runs": runs,
            "review_state": [], "config": {}}  # fmt: skip


def _env(home: Path) -> dict:
    return {**os.environ, "DRILL_HOME": str(home), "LANG": "en_US.UTF-8", "COLUMNS": "100"}


def build(home: Path, attempts: int) -> float:
    """A DRILL_HOME holding ``attempts`` imported attempts; returns the seconds spent importing (0 when cached)."""
    stamp = home / "bench-generated.json"
    if stamp.exists() and json.loads(stamp.read_text()) == {"attempts": attempts, "generator": GENERATOR}:
        return 0.0
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    bank = sorted(load_bundled().questions.values(), key=lambda q: q.id)
    rng = random.Random(attempts)
    now = datetime.now() - timedelta(hours=1)
    span_min = 3 * 365 * 24 * 60
    first_day = now - timedelta(minutes=span_min)
    spent = 0.0
    for start in range(0, attempts, CHUNK):
        path = home / "chunk.json"
        path.write_text(json.dumps(_chunk(bank, start, min(CHUNK, attempts - start), attempts, rng, first_day, span_min)))
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "drill", "history", "import", str(path)], env=_env(home), check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        spent += time.perf_counter() - began
        path.unlink()
        print(f"  imported {start + min(CHUNK, attempts - start):>9,} attempts ({spent:.0f} s importing)", flush=True)
    if attempts == 0:
        subprocess.run([sys.executable, "-m", "drill", "stats"], env=_env(home), check=True, stdout=subprocess.DEVNULL)
    stamp.write_text(json.dumps({"attempts": attempts, "generator": GENERATOR}))
    return spent


def timed(home: Path, args: list[str], runs: int) -> float:
    def once() -> float:
        began = time.perf_counter()
        with open(os.devnull) as stdin:
            done = subprocess.run([sys.executable, "-m", "drill", *args], env=_env(home), stdin=stdin, capture_output=True)
        if done.returncode not in (0, 1):
            raise SystemExit(f"drill {' '.join(args)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        return time.perf_counter() - began

    once()  # warm: bank cache, OS file cache
    return statistics.median(once() for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "drill-bench-history")
    parser.add_argument("--rebuild", action="store_true", help="Regenerate the cached histories.")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.rebuild:
        shutil.rmtree(args.cache_dir, ignore_errors=True)
    times: dict[int, dict[str, float]] = {}
    for n in sizes:
        home = args.cache_dir / str(n)
        print(f"history of {n:,} attempts in {home}", flush=True)
        spent = build(home, n)
        if spent:
            print(f"  import: {spent:.1f} s ({n / spent:,.0f} attempts/s)")
        times[n] = {name: timed(home, cmd, args.runs) for name, cmd in COMMANDS.items()}
    base = times.get(0)
    print(f"\nmedian of {args.runs} runs, seconds (ratio to 0 attempts); {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'command':<18}" + "".join(f"{n:>16,}" for n in sizes))
    failed = []
    for name in COMMANDS:
        cells = []
        for n in sizes:
            t = times[n][name]
            ratio = t / base[name] if base else None
            cells.append(f"{t:7.3f}" + (f" ({ratio:4.1f}x)" if ratio is not None and n else "        "))
            if n in BUDGET and t >= BUDGET[n]:
                failed.append(f"{name} at {n:,}: {t:.2f} s >= {BUDGET[n]} s")
            if n == 100_000 and ratio is not None and ratio > MAX_RATIO:
                failed.append(f"{name} at {n:,}: {ratio:.1f}x its time at 0 > {MAX_RATIO}x")
        print(f"{name:<18}" + "".join(f"{c:>16}" for c in cells))
    print("\n" + ("\n".join(f"over budget: {f}" for f in failed) if failed else "all within budget"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
