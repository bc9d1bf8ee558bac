"""``drill grade --trace`` costs at most 0.5 s more than a grade on CPU.

Grades the bundled solutions (a passing file: without --trace nothing is traced) and one failing
file (a failing grade always traces once, to name the line) in a warm judge, as the whiteboard
does, with and without ``--trace``, and prints the medians and the difference against the budget.
Run: python benchmarks/bench_trace.py [--runs N] [--tasks sdpa,mha,causal]. Exits 1 over budget.
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

BUDGET_S = 0.5


def timed(grader: WarmGrader, path: Path, task: str, trace: bool) -> float:
    request = {**make_request(path, task=task, device="cpu"), "trace": trace}
    started = time.perf_counter()
    report = grader.grade(request, 60.0)
    took = time.perf_counter() - started
    if trace and report.trace is None:
        raise SystemExit(f"{task}: --trace produced no trace")
    return took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tasks", default="sdpa,mha,causal,bpe,lr_schedule,beam_search")
    args = parser.parse_args()
    files = [(task, catalog.get(task).solution, "passing") for task in args.tasks.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        failing = Path(tmp) / "sdpa_mask_after_softmax.py"
        failing.write_text(catalog.get("sdpa").solution.read_text().replace(
            'scores = scores.masked_fill(~mask, float("-inf"))\n    return torch.softmax(scores, dim=-1) @ v',
            'weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)\n    return weights @ v'))  # fmt: skip
        files.append(("sdpa", failing, "failing"))
        worst = 0.0
        with WarmGrader(warmup=make_request(catalog.get("sdpa").solution, task="sdpa", device="cpu")) as grader:
            for task, path, kind in files:
                plain = statistics.median(timed(grader, path, task, False) for _ in range(args.runs))
                traced = statistics.median(timed(grader, path, task, True) for _ in range(args.runs))
                worst = max(worst, traced - plain)
                print(f"{task:<7} {kind:<8} grade {plain:6.3f} s   --trace {traced:6.3f} s   +{traced - plain:6.3f} s")
    verdict = "ok" if worst <= BUDGET_S else "OVER BUDGET"
    print(f"--trace adds at most {worst:.3f} s (budget {BUDGET_S} s): {verdict}")
    return 0 if worst <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
