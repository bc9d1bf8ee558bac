"""Startup budget: median wall time of drill's quick commands vs `python -c "import typer, rich, yaml"`.

The budgets (issue 31): `drill bank list` at most 1.5x the baseline's median and bare `drill` (the
dashboard, the command typed most) at most 1.8x, in a terminal and piped, same machine, same run.
`drill bank list` is timed twice: piped (plain text, rich not imported) and in a
pseudo-terminal (styled with rich), the way a person sees it. Bare `drill` (today's plan) runs
on a history with a failing grade run and an answered question, so it reads the task catalog, the
diagnosis codes and a cached review card too.
Run: python benchmarks/bench_startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# A failing grade run (its codes make linked questions due, so the plan maps codes to questions) and an
# answered question (its card is cached, so the plan reads a due date).
SEED = """
from drill.bank.load import load_bank
from drill.history import store
from drill.practice import review
conn = store.connect()
store.record_grade_run(conn, task='sdpa', file='a.py', source='grade', passed=False, codes=['scale-missing'], seconds=1.0)
q = load_bank().get('attn-why-sqrt-dk')
with store.transaction(conn):
    uid = store.insert_attempt(conn, session_id=None, question=q, answer='a', correct=None, rating=3, seconds=1.0,
                               time_limit=None, timed_out=False)
    review.record(conn, q.id, uid)
"""


def wall(cmd: list[str], env: dict, tty: bool) -> float:
    if not tty:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        return time.perf_counter() - t0
    master, slave = pty.openpty()
    drain = threading.Thread(target=_drain, args=(master,), daemon=True)
    drain.start()
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=slave, stderr=subprocess.DEVNULL, check=True, env=env)
    elapsed = time.perf_counter() - t0
    os.close(slave)
    drain.join(timeout=5)
    os.close(master)
    return elapsed


def _drain(fd: int) -> None:
    """Read the terminal's output so the child never blocks on a full pty buffer."""
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    # The script beside this interpreter, not a shim on PATH (pyenv's shims add ~1 s of bash).
    script = Path(sys.executable).parent / "drill"
    if not script.exists():
        sys.exit("drill is not installed beside this python (pip install -e .)")
    runs = {
        "python -c 'import typer, rich, yaml'": ([sys.executable, "-c", "import typer, rich, yaml"], False),
        "drill bank list (piped)": ([str(script), "bank", "list"], False),
        "drill bank list (terminal)": ([str(script), "bank", "list"], True),
        "drill (piped)": ([str(script)], False),
        "drill (terminal)": ([str(script)], True),
        "drill quiz --help (terminal)": ([str(script), "quiz", "--help"], True),
    }
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DRILL_HOME": home, "COLUMNS": "120"}
        env.pop("FORCE_COLOR", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # time what users run: with compiled .pyc files
        subprocess.run([sys.executable, "-c", SEED], check=True, env=env)
        for cmd, tty in runs.values():  # warm the page cache, __pycache__ and the bank cache
            wall(cmd, env, tty)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):  # interleaved, so background load hits all alike
            for name, (cmd, tty) in runs.items():
                times[name].append(wall(cmd, env, tty))
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["python -c 'import typer, rich, yaml'"]
    for name, median in medians.items():
        print(f"{name:<38} median {median * 1000:5.0f} ms  ({median / base:.2f}x)")
    budgets = {"drill bank list": 1.5, "drill (": 1.8}
    over = [name for name, m in medians.items() for prefix, limit in budgets.items() if name.startswith(prefix) and m / base > limit]
    print(f"budget: 1.5x the baseline for drill bank list, 1.8x for bare drill; over: {', '.join(over) or 'none'}")


if __name__ == "__main__":
    main()
