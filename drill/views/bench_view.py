"""Rich rendering of ``drill grade --bench``: the grade report, then time ratios and peak memory per T
(a Triton kernel's bench: drill/views/kernel_bench_view.py)."""

from __future__ import annotations

import json

from rich.markup import escape
from rich.table import Table

from drill.grade.benchfit import BenchResult
from drill.grade.kernel_bench import KernelBenchResult
from drill.grade.kernel_env import is_kernel_task
from drill.grade.report import Report
from drill.grade.tasks import BENCH_TASKS
from drill.text.messages import Msg, translated
from drill.views import grade_view
from drill.views.console import err, out
from drill.views.kernel_bench_view import print_kernel_bench

NAMES = ("yours", "reference", "torch")
INTERPRETED = Msg("--bench skipped: on CPU your kernel runs under Triton's interpreter (numpy, one program at a time), "
                  "whose speed says nothing about the kernel's; it is timed only compiled, on a GPU (--device cuda)")


def print_graded(report: Report, bench: BenchResult | KernelBenchResult | None, as_json: bool, lang: str) -> None:
    """The report, and the bench when it ran (a failing kernel is not benchmarked); JSON adds a ``bench`` key."""
    if as_json:
        print(json.dumps({**report.to_dict(), "bench": bench.to_json() if bench else None}, ensure_ascii=False, indent=2))
        return
    grade_view.print_report(report, False, lang)
    if isinstance(bench, KernelBenchResult):
        print_kernel_bench(bench.data, lang)
        return
    if bench is None:
        if is_kernel_task(report.task) and report.device == "cpu":
            err.print(translated(INTERPRETED, lang))
            return
        why = "the kernel must pass the checks first" if not report.passed else f"it times kernels called as fn(q, k, v): {', '.join(BENCH_TASKS)}"
        err.print(f"--bench skipped: {why}")
        return
    table = Table(title=f"--bench · {bench.task} · {bench.device} · {bench.shape}", title_justify="left")
    for name in ("T", "yours", "reference", "torch sdpa", "÷ reference", "÷ torch", "peak yours", "peak ref", "peak torch"):
        table.add_column(name, justify="right")
    for row in bench.rows:
        yours, ref, sdpa = (row.contenders[n] for n in NAMES)
        table.add_row(
            str(row.t), _ms(yours.seconds), _ms(ref.seconds), _ms(sdpa.seconds),
            f"{yours.seconds / ref.seconds:.2f}x", f"{yours.seconds / sdpa.seconds:.2f}x",
            _mib(yours.peak_bytes), _mib(ref.peak_bytes), _mib(sdpa.peak_bytes),
        )  # fmt: skip
    out.print(table)
    for name in NAMES:
        slope = bench.memory_slope(name)
        fit = "needs two sizes" if slope is None else f"T^{slope:.2f} ({bench.growth(name)})"
        out.print(f"peak memory of {name:<9} grows as {fit}")
    out.print(f"[dim]{escape(bench.memory_measure)}[/]")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"
