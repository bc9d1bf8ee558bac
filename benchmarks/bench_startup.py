"""Startup budget: median wall time of `drill bank list` vs `python -c "import typer, rich, yaml"`.

The issue's bar: drill's median at most 1.5x the baseline's, same machine, same run.
Run: python benchmarks/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def median_wall(cmd: list[str], runs: int, env: dict) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # The script beside this interpreter, not a shim on PATH (pyenv's shims add ~1 s of bash).
    script = Path(sys.executable).parent / "drill"
    drill = str(script) if script.exists() else sys.exit("drill is not installed beside this python (pip install -e .)")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DRILL_HOME": home}
        baseline_cmd = [sys.executable, "-c", "import typer, rich, yaml"]
        drill_cmd = [drill, "bank", "list"]
        median_wall(drill_cmd, 2, env)  # warm the page cache and __pycache__
        # Interleave the two so background load affects both alike.
        base, ours = [], []
        for _ in range(args.runs):
            base.append(median_wall(baseline_cmd, 1, env))
            ours.append(median_wall(drill_cmd, 1, env))
    b, d = statistics.median(base), statistics.median(ours)
    print(f"python -c 'import typer, rich, yaml': median {b * 1000:.0f} ms")
    print(f"drill bank list:                      median {d * 1000:.0f} ms")
    print(f"ratio: {d / b:.2f}x (budget 1.5x)")


if __name__ == "__main__":
    main()
