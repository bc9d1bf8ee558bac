"""One-shot `drill grade` against `python -c "import torch"`, for every task's bundled solution.

The grade starts the judge, which starts its zygote first so that both import torch at once, loads
the one task it needs, forks a user side, runs the battery and exits without interpreter teardown.
Budget (issue 31): each task's grade at most `import torch` + 1.0 s. A file that does not parse is
answered from the CLI's own process, before any torch process starts: budget 0.3 s.

Run: python benchmarks/bench_grade.py [--runs 5] [--tasks sdpa,mha]. Commands are interleaved, so
background load hits all alike; prints medians and exits 1 over budget.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from drill.grade.tasks import TASKS  # noqa: E402 - torch-free registry

SOLUTIONS = ROOT / "drill" / "grade" / "tasks"
BUDGET_S, SYNTAX_BUDGET_S = 1.0, 0.3


def wall(command: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True, env=env)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tasks", default=",".join(TASKS))
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    drill = [sys.executable, "-m", "drill"]
    with tempfile.TemporaryDirectory() as home:
        broken = Path(home) / "broken.py"
        broken.write_text("def scaled_dot_product_attention(q, k, v, mask=None)\n    return q\n")
        env = {**__import__("os").environ, "DRILL_HOME": home}
        commands = {"import torch": [sys.executable, "-c", "import torch"],
                    "syntax error": [*drill, "grade", str(broken), "--device", "cpu"]}  # fmt: skip
        for task in tasks:
            commands[task] = [*drill, "grade", str(SOLUTIONS / task / "solution.py"), "--task", task, "--device", "cpu", "--json"]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for name, command in commands.items():  # warm the page cache and __pycache__
            wall(command, env)
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(wall(command, env))
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["import torch"]
    label = 'python -c "import torch"'
    print(f"{label:<34} median {base:6.2f} s")
    over = []
    syntax = medians["syntax error"]
    print(f"{'drill grade (syntax error)':<34} median {syntax:6.2f} s   (budget {SYNTAX_BUDGET_S} s)")
    if syntax > SYNTAX_BUDGET_S:
        over.append("syntax error")
    for task in tasks:
        extra = medians[task] - base
        print(f"{'drill grade ' + task:<34} median {medians[task]:6.2f} s   import torch {extra:+.2f} s")
        if extra > BUDGET_S:
            over.append(task)
    worst = max(tasks, key=lambda t: medians[t])
    print(f"worst: {worst} at import torch {medians[worst] - base:+.2f} s (budget +{BUDGET_S} s); over budget: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
