"""One-shot `drill grade` against `python -c "import torch"`, for every task's bundled solution.

The grade starts the judge, which imports torch and forks its zygote from there (one torch import
for both), loads the one task it needs, forks a user side, runs the battery and exits without
interpreter teardown.
Budget (issue 31): each task's grade at most `import torch` + 1.0 s. A file that does not parse is
answered from the CLI's own process, before any torch process starts: budget 0.3 s.

Run: python benchmarks/bench_grade.py [--runs 5] [--tasks sdpa,mha]. Commands are interleaved, so
background load hits all alike; prints medians of wall time, and of CPU time (all processes of the
command: on a busy machine, what the wall time would be given a core each), and exits 1 over budget.
"""

from __future__ import annotations

import argparse
import resource
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


def timed(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command``; CPU counts every process it waited for (judge, zygote, user sides)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True, env=env)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


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
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for name, command in commands.items():  # warm the page cache and __pycache__
            timed(command, env)
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(timed(command, env))
    medians = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    base = medians["import torch"]
    label = 'python -c "import torch"'
    print(f"{label:<34} median {base:6.2f} s   cpu {cpu['import torch']:5.2f} s")
    over = []
    syntax = medians["syntax error"]
    print(f"{'drill grade (syntax error)':<34} median {syntax:6.2f} s   cpu {cpu['syntax error']:5.2f} s   (budget {SYNTAX_BUDGET_S} s)")
    if syntax > SYNTAX_BUDGET_S:
        over.append("syntax error")
    for task in tasks:
        extra = medians[task] - base
        print(f"{'drill grade ' + task:<34} median {medians[task]:6.2f} s   cpu {cpu[task]:5.2f} s   "
              f"import torch {extra:+.2f} s (cpu {cpu[task] - cpu['import torch']:+.2f} s)")
        if extra > BUDGET_S:
            over.append(task)
    worst = max(tasks, key=lambda t: medians[t])
    print(f"worst: {worst} at import torch {medians[worst] - base:+.2f} s (budget +{BUDGET_S} s); over budget: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
