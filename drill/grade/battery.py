"""The grading engine: load the file, run the task's checks, diagnose. Runs inside the worker.

Tests call :func:`run_battery` directly; drill itself only ever runs it in a child process.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import torch

from drill.errors import DrillError
from drill.grade.context import CheckDef, Context, WrongShape
from drill.grade.diagnose import diagnose
from drill.grade.loader import UserCodeError, load_user_file
from drill.grade.report import Check, Report
from drill.grade.tasks import TASKS, detect

Emit = Callable[[dict], None]


def resolve_device(name: str) -> torch.device:
    if name == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return torch.device("cuda")
    if name == "cuda":
        build = f"torch {torch.__version__}" + (
            f" (built for CUDA {torch.version.cuda})" if torch.version.cuda else " (a CPU-only build)"
        )
        raise DrillError(f"--device cuda: CUDA is not available to {build}")
    return torch.device("cpu")


def run_check(definition: CheckDef) -> Check:
    """Run one check; the user's exceptions become an error with their own frames."""
    try:
        result = definition.run()
    except UserCodeError as exc:
        codes = ["not-implemented"] if isinstance(exc.original, NotImplementedError) else []
        result = Check("", "", "error", str(exc), codes)
    except WrongShape as exc:
        result = Check("", "", "fail", str(exc), ["wrong-output-shape"])
    except Exception as exc:  # noqa: BLE001 - e.g. the user returned something unusable
        result = Check("", "", "error", f"could not check the result: {type(exc).__name__}: {exc}")
    result.id, result.category = definition.id, definition.category
    return result


def rules_check(ctx: Context) -> Check:
    seen = sorted(ctx.spy.seen)
    if not seen:
        return Check("rules.builtins", "rules", "pass", "no call to torch's own attention")
    if ctx.allow_builtins:
        return Check("rules.builtins", "rules", "pass", f"uses {', '.join(seen)} (allowed by --allow-builtins)")
    return Check("rules.builtins", "rules", "fail", f"calls {', '.join(seen)}", ["uses-builtin"])


def run_battery(
    path: str | Path,
    task: str | None = None,
    device: str = "auto",
    seed: int = 0,
    allow_builtins: bool = False,
    emit: Emit = lambda event: None,
) -> Report:
    """Grade one file in this process. Raises DrillError only when grading cannot start."""
    started = time.perf_counter()
    path = Path(path)
    dev = resolve_device(device)
    report = Report(task=task or "unknown", device=str(dev))

    def finish(*checks: Check) -> Report:
        for check in checks:
            report.checks.append(check)
            emit({"event": "check", "check": {**check.to_dict(), "codes": check.codes}})
        report.duration_s = time.perf_counter() - started
        return report

    try:
        module = load_user_file(path)
    except UserCodeError as exc:
        emit({"event": "start", "task": report.task, "device": report.device, "total": 1})
        report.diagnosis = diagnose([check := Check("load.import", "robustness", "error", str(exc))])
        return finish(check)

    spec = TASKS[task] if task else detect(vars(module))
    entry = getattr(module, spec.entry, None) if spec else None
    if entry is None:
        wanted = spec.entry if spec else " or ".join(s.entry for s in TASKS.values())
        check = Check("load.entry", "rules", "fail", f"{path.name} does not define {wanted}", ["not-implemented"])
        emit({"event": "start", "task": report.task, "device": report.device, "total": 1})
        report.diagnosis = diagnose([check])
        return finish(check)

    report.task = spec.name
    implementation = spec.load()
    ctx = Context(path=path, entry=entry, device=dev, seed=seed, allow_builtins=allow_builtins)
    definitions = implementation.checks(ctx)
    emit({"event": "start", "task": report.task, "device": report.device, "total": len(definitions) + 1})
    for definition in definitions:
        finish(run_check(definition))
    finish(rules_check(ctx))
    report.diagnosis = diagnose(report.checks, implementation, ctx)
    report.duration_s = time.perf_counter() - started
    return report
