"""`drill doctor` and `drill export anki` against `python -c "import typer, rich, yaml"` (issue 31: each < 1 s).

doctor reads torch's build from torch/version.py instead of importing torch (a CUDA build asks for its
device in a child with a time limit); export anki renders its 3,100 HTML fields with cmark-gfm.
Run: python benchmarks/bench_quick_commands.py [--runs 7]. Interleaved medians; exits 1 over budget.
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

BUDGET_S = 1.0


def wall(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    script = Path(sys.executable).parent / "drill"  # not a shim on PATH
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DRILL_HOME": home}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        commands = {
            "python -c 'import typer, rich, yaml'": [sys.executable, "-c", "import typer, rich, yaml"],
            "drill doctor": [str(script), "doctor"],
            "drill export anki": [str(script), "export", "anki", str(Path(home) / "deck.apkg")],
        }
        for command in commands.values():  # warm the page cache, __pycache__ and the bank cache
            wall(command, env)
        times = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                times[name].append(wall(command, env))
    medians = {name: statistics.median(t) for name, t in times.items()}
    over = [name for name, m in medians.items() if name.startswith("drill") and m >= BUDGET_S]
    for name, median in medians.items():
        print(f"{name:<38} median {median * 1000:6.0f} ms")
    print(f"budget: each drill command under {BUDGET_S:.0f} s; over: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
