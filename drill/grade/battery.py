"""The grading engine: start a user side, run the task's checks against it, diagnose. Runs in the judge.

The judge never imports the user's file: the user side (forked from the zygote for this grade)
does, and every check reads only the tensors it sends back. Tests call :func:`run_battery`
directly (the test process is then the judge); drill runs it in the judge process.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import torch

from drill.errors import DrillError
from drill.grade import remote
from drill.grade.checks.raised import raised_codes
from drill.grade.context import CheckDef, Context, WrongShape
from drill.grade.diagnose import diagnose, diagnose_all
from drill.grade.precheck import missing_entry
from drill.grade.remote import Abort, InternalError, UserCodeError
from drill.grade.report import FAILING, Check, Report
from drill.grade.tasks import TASKS, detect
from drill.grade.tracing import leak_pictures, run_trace
from drill.text.messages import Ev

Emit = Callable[[dict], None]
DEFAULT_TIMEOUT = 60.0


def resolve_device(name: str) -> torch.device:
    if name == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return torch.device("cuda")
    if name == "cuda":
        if torch.version.cuda:
            raise DrillError("--device cuda: CUDA is not available to torch {version} (built for CUDA {cuda})",
                             version=torch.__version__, cuda=torch.version.cuda)  # fmt: skip
        raise DrillError("--device cuda: CUDA is not available to torch {version} (a CPU-only build)", version=torch.__version__)
    return torch.device("cpu")


def run_check(definition: CheckDef, ctx: Context) -> Check:
    """Run one check; the user's exceptions become an error with their own frames."""
    try:
        result = definition.run()
    except UserCodeError as exc:
        codes = ["not-implemented"] if exc.kind == "not-implemented" else raised_codes(str(exc), ctx.path)
        result = Check("", "", "error", exc.args[0], codes)
    except WrongShape as exc:
        result = Check("", "", "fail", exc.args[0], ["wrong-output-shape"])
    except InternalError:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. the user returned something unusable
        if ctx.user.stopped:
            raise ctx.user.stopped from None
        if raised_in_reference(exc):  # drill's own reference or layout code: a grader bug, never the user's
            import traceback

            raise InternalError(f"{type(exc).__name__} in check {definition.id}: {exc}", traceback.format_exc()) from exc
        result = Check("", "", "error", Ev("could not check the result: {type}: {text}", type=type(exc).__name__, text=str(exc)))
    finally:
        ctx.user.release()
    result.id, result.category = definition.id, definition.category
    return result


REFERENCE_CODE = tuple(str(Path(__file__).resolve().parent / name) for name in ("layouts.py", "reference.py"))


def raised_in_reference(exc: BaseException) -> bool:
    """The innermost frame is drill's reference or layout code, which reads only tensors the
    judge built or copied itself (shapes already checked): an exception there is drill's bug."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename in REFERENCE_CODE


def rules_check(ctx: Context, task) -> Check:
    seen = ctx.user.builtins_seen()
    if not seen:
        what = getattr(task, "builtin_what", ATTENTION)
        return Check("rules.builtins", "rules", "pass", Ev("no call to torch's own {what}", what=what if isinstance(what, Ev) else Ev("{code}", code=what)))
    described = {str(shown): shown for shown in (getattr(task, "forbidden", None) or {}).values() if isinstance(shown, Ev)}
    names = Ev.seq([name if isinstance(name, Ev) else described.get(name) or Ev("{code}", code=name) for name in seen], ", ")  # code: backticked in Chinese
    if ctx.allow_builtins:
        return Check("rules.builtins", "rules", "pass", Ev("uses {names} (allowed by --allow-builtins)", names=names))
    return Check("rules.builtins", "rules", "fail", Ev("calls {names}", names=names), [getattr(task, "builtin_code", "uses-builtin")])


ATTENTION = Ev("attention")


GRADE_MEMORY = 2 << 30  # the grader's inputs are a few MiB: 2 GiB beyond torch is room for any naive O(T²) kernel on them


def memory_default() -> int:
    """Half the machine's memory, for --bench (T up to 4096): the machine survives a runaway file."""
    try:
        with open("/proc/meminfo") as f:
            total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        return 4 << 30
    return max(1 << 30, total // 2)


def run_battery(
    path: str | Path,
    task: str | None = None,
    device: str = "auto",
    seed: int = 0,
    allow_builtins: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | None = None,
    trace: bool = False,
    emit: Emit = lambda event: None,
) -> Report:
    """Grade one file against a fresh user side. Raises DrillError only when grading cannot start."""
    started = time.perf_counter()
    path = Path(path)
    dev = resolve_device(device)
    report = Report(task=task or "unknown", device=str(dev), seed=seed)
    memory = None if dev.type == "cuda" else (memory_limit or GRADE_MEMORY)  # CUDA reserves address space
    user = remote.UserProcess(remote.zygote(), timeout=timeout, device=dev, memory=memory)
    announced = False

    def start(total: int) -> None:
        nonlocal announced
        announced = True
        emit({"event": "start", "task": report.task, "device": report.device, "total": total})

    def finish(*checks: Check) -> Report:
        for check in checks:
            report.checks.append(check)
            emit({"event": "check", "check": {**check.to_dict(), "codes": check.codes}})
        report.duration_s = time.perf_counter() - started
        return report

    try:
        try:
            names = user.load(str(path.resolve()))
        except UserCodeError as exc:
            start(1)
            category = "rules" if exc.kind == "rule" else "robustness"
            check = Check("load.import" if exc.kind != "rule" else "rules.no-drill-import", category,
                          "fail" if exc.kind == "rule" else "error", exc.args[0])  # fmt: skip
            report.diagnosis = diagnose([check])
            return finish(check)

        spec = TASKS[task] if task else detect(names)
        entry = user.entry(spec.entry) if spec and spec.entry in names else None
        if entry is None:
            check = missing_entry(path.name, names, spec)
            start(1)
            report.diagnosis = diagnose([check])
            return finish(check)

        report.task = spec.name
        implementation = spec.load()
        ctx = Context(path=path, entry=entry, device=dev, user=user, seed=seed, allow_builtins=allow_builtins)
        if getattr(implementation, "forbidden", None):
            user.forbid(implementation.forbidden)
        definitions = implementation.checks(ctx)
        start(len(definitions) + 1)
        for definition in definitions:
            with ctx.edge_case(definition.category == "stability"):
                finish(run_check(definition, ctx))
        finish(rules_check(ctx, implementation))
        report.diagnosis, report.candidates = diagnose_all(report.checks, implementation, ctx)
        if trace or not report.passed:  # one more call: cheap on the trace's small input
            failed = frozenset(c.id for c in report.checks if c.status in FAILING)
            found = run_trace(spec.name, ctx, rows=trace, failed=failed)
            report.trace = found.get("trace", [] if trace else None)
            report.first_divergence = found.get("first_divergence")
            report.pictures = leak_pictures(spec.name, ctx, {c.id for c in report.checks if c.category == "mask-leak"
                                                             and c.status in FAILING}) + found.get("pictures", [])  # fmt: skip
    except Abort as exc:
        if not announced:
            start(1)
        finish(exc.check)
        report.diagnosis = diagnose(report.checks)
    finally:
        left = user.close()
    if left:
        names_left = ", ".join(sorted(set(left))[:5])
        left_behind = (Ev("your code left {n} processes running ({names}); drill killed them at the end of the grade", n=len(left), names=names_left)
                       if len(left) > 1 else Ev("your code left 1 process running ({names}); drill killed it at the end of the grade", names=names_left))  # fmt: skip
        finish(Check("isolation.processes", "robustness", "warn", left_behind))
    report.duration_s = time.perf_counter() - started
    return report
