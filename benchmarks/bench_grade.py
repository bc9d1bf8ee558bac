"""Grading one sdpa file on CPU must cost at most 2 s more than ``python -c "import torch"``.

The grade starts the judge and the zygote (both import torch, in parallel), forks a user side and
runs the battery through it.

Run: python benchmarks/bench_grade.py [--runs N]. Prints both medians; exits 1 over budget.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "whiteboard" / "impls" / "correct" / "sdpa_matmul.py"
BUDGET_S = 2.0


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    baseline = median_seconds([sys.executable, "-c", "import torch"], runs)
    grade = median_seconds([sys.executable, "-m", "drill", "grade", str(SAMPLE), "--device", "cpu", "--json"], runs)
    print(f"python -c 'import torch'   median {baseline:.2f} s")
    print(f"drill grade sdpa (cpu)     median {grade:.2f} s")
    print(f"overhead                   {grade - baseline:+.2f} s (budget {BUDGET_S:.0f} s)")
    return 0 if grade - baseline <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
