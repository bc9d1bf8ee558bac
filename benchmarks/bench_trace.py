"""``drill grade --trace`` costs at most 0.5 s more than a grade on CPU, and so do the stress inputs on a failed grade.

Grades the bundled solutions (a passing file: without --trace nothing is traced) and one failing
file (a failing grade always traces once, to name the line) in a warm judge, as the whiteboard
does, with and without ``--trace``, and prints the medians and the difference against the budget.
Then the stress inputs: for mutants whose bug the small trace input hides, the trace of a failed grade
with their failed checks (small input, then the stress inputs those checks pick) against the same trace
without them (the small input alone): what a failed grade pays for them.
Run: python benchmarks/bench_trace.py [--runs N] [--tasks sdpa,mha,causal,bpe,lr_schedule,beam_search]. Exits 1 over budget.
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

import torch  # noqa: E402

from drill.grade import remote  # noqa: E402
from drill.grade.context import Context  # noqa: E402
from drill.grade.report import FAILING  # noqa: E402
from drill.grade.run import make_request  # noqa: E402
from drill.grade.tasks import TASKS  # noqa: E402
from drill.grade.tracing import run_trace  # noqa: E402
from drill.grade.warm import WarmGrader  # noqa: E402
from drill.whiteboard import catalog  # noqa: E402

BUDGET_S = 0.5
STRESSED = (("sdpa", "unstable-softmax__1.py"), ("softmax", "softmax-no-max-shift__1.py"), ("moe", "unstable-softmax__moe.py"),
            ("flash_decoding", "flash-decoding-merge-unshifted__1.py"), ("kv_cache", "kv-cache-not-appended__1.py"),
            ("layernorm", "layernorm-one-pass-variance__1.py"), ("quantize", "quant-no-clamp__1.py"))  # fmt: skip


def timed(grader: WarmGrader, path: Path, task: str, trace: bool) -> float:
    request = {**make_request(path, task=task, device="cpu"), "trace": trace}
    started = time.perf_counter()
    report = grader.grade(request, 60.0)
    took = time.perf_counter() - started
    if trace and report.trace is None:
        raise SystemExit(f"{task}: --trace produced no trace")
    return took


def stress_cost(grader: WarmGrader, task: str, path: Path, runs: int) -> tuple[float, float]:
    """(the failed grade's median time, the median time its stress inputs add to its trace)."""
    report = grader.grade(make_request(path, task=task, device="cpu"), 60.0)
    if report.first_divergence is None or not report.first_divergence.get("input"):
        raise SystemExit(f"{task}: {path.name} is not named on a stress input")
    grade = statistics.median(timed(grader, path, task, False) for _ in range(runs))
    failed = frozenset(c.id for c in report.checks if c.status in FAILING)
    user = remote.UserProcess(remote.zygote(), timeout=60, device=torch.device("cpu"), memory=None)
    try:
        user.load(str(path))
        ctx = Context(path=path, entry=user.entry(TASKS[task].entry), device=torch.device("cpu"), user=user)
        run_trace(task, ctx, rows=False, failed=failed)  # warm: the first call imports the task's modules

        def took(which: frozenset[str]) -> float:
            started = time.perf_counter()
            run_trace(task, ctx, rows=False, failed=which)
            return time.perf_counter() - started

        added = statistics.median(took(failed) - took(frozenset()) for _ in range(runs))
    finally:
        user.close()
    return grade, added


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
                print(f"{task:<14} {kind:<8} grade {plain:6.3f} s   --trace {traced:6.3f} s   +{traced - plain:6.3f} s")
            for task, name in STRESSED:
                grade, added = stress_cost(grader, task, catalog.get(task).solution.parent / "mutants" / name, args.runs)
                worst = max(worst, added)
                print(f"{task:<14} {name:<40} failed grade {grade:6.3f} s   stress inputs +{added:6.3f} s")
    verdict = "ok" if worst <= BUDGET_S else "OVER BUDGET"
    print(f"--trace, or the stress inputs of a failed grade, add at most {worst:.3f} s (budget {BUDGET_S} s): {verdict}")
    return 0 if worst <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
