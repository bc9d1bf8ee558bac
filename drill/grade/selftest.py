"""``drill selftest``: grade every bundled solution and mutant on this machine and compare with what they must get.

Each task folder ships a reference ``solution.py`` (must pass with no diagnosis) and mutants
``mutants/<code>__<n>.py``, one classic bug each (must fail, diagnosed as exactly ``<code>``:
no other code beside it). Grading runs in one judge process (drill.grade.isolation), exactly as
``drill grade`` does, so a disagreement here means grading is wrong on this device. Torch-free:
the CLI imports it before the judge starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from drill.errors import DrillError
from drill.grade.kernel_env import is_kernel_task, triton_version
from drill.grade.run import DEFAULT_TIMEOUT, make_request
from drill.grade.tasks import TASKS

TASKS_DIR = Path(__file__).resolve().parent / "tasks"


@dataclass(frozen=True)
class Case:
    task: str
    path: Path
    expected: str | None  # the code a mutant must be diagnosed with; None: the solution, which must pass

    @property
    def kind(self) -> str:
        return "solution" if self.expected is None else "mutant"

    @property
    def name(self) -> str:
        return self.path.name if self.expected is None else f"mutants/{self.path.name}"


@dataclass
class Row:
    case: Case
    passed: bool = False
    codes: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)  # ids of the checks that failed, as evidence
    error: str = ""  # the grade could not run (a fault of drill, reported as a disagreement)

    @property
    def ok(self) -> bool:
        if self.error:
            return False
        if self.case.expected is None:
            return self.passed and not self.codes
        return not self.passed and self.codes == [self.case.expected]

    @property
    def got(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if self.passed:
            return "pass" + (f" ({', '.join(self.codes)})" if self.codes else "")
        return ", ".join(self.codes) or "fail, no code"

    def to_dict(self) -> dict:
        return {
            "task": self.case.task,
            "file": self.case.name,
            "kind": self.case.kind,
            "expected": self.case.expected or "pass",
            "passed": self.passed,
            "codes": self.codes,
            "failing_checks": self.failing,
            "error": self.error,
            "ok": self.ok,
        }


@dataclass
class Selftest:
    device: str
    rows: list[Row]
    skipped: list[str] = field(default_factory=list)  # kernel tasks left out: Triton is not installed

    @property
    def ok(self) -> bool:
        return bool(self.rows) and all(r.ok for r in self.rows)

    def counts(self, kind: str) -> tuple[int, int]:
        rows = [r for r in self.rows if r.case.kind == kind]
        return sum(r.ok for r in rows), len(rows)

    def to_dict(self) -> dict:
        (sol_ok, sol_n), (mut_ok, mut_n) = self.counts("solution"), self.counts("mutant")
        return {
            "device": self.device,
            "passed": self.ok,
            "solutions": {"agree": sol_ok, "total": sol_n},
            "mutants": {"named": mut_ok, "total": mut_n},
            "rows": [r.to_dict() for r in self.rows],
            "skipped": self.skipped,
        }


def cases(task: str | None = None) -> list[Case]:
    """Every bundled solution and mutant, task by task in registry order (one task with ``task``)."""
    if task is not None and task not in TASKS:
        from drill.text.suggest import hint

        raise DrillError("unknown task {task!r}{hint} (tasks: {tasks})", task=task, hint=hint(task, TASKS), tasks=", ".join(TASKS))
    found: list[Case] = []
    for name in [task] if task else list(TASKS):
        folder = TASKS_DIR / name
        if (folder / "solution.py").is_file():
            found.append(Case(name, folder / "solution.py", None))
        found += [Case(name, p, p.stem.split("__")[0]) for p in sorted((folder / "mutants").glob("*.py"))]
    return found


def run_selftest(
    device: str = "auto",
    task: str | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    on_row: Callable[[Row, int], None] = lambda row, total: None,
    selected: list[Case] | None = None,
) -> Selftest:
    """Grade each case (``selected``, default: :func:`cases`) in one judge on ``device``; a judge
    that dies is restarted, and its case counts as a disagreement."""
    from drill.grade.isolation import JudgeFailed, Worker

    todo = selected if selected is not None else cases(task)
    skipped = [] if task or triton_version() else sorted({c.task for c in todo if is_kernel_task(c.task)})
    todo = [c for c in todo if c.task not in skipped]
    make_request(todo[0].path, device=device) if todo else None  # a bad --device is refused before the judge starts
    rows: list[Row] = []
    used = device
    worker = Worker(threads=1)
    try:
        for case in todo:
            row = Row(case)
            try:
                report = worker.grade(make_request(case.path, task=case.task, device=device), timeout)
            except JudgeFailed as exc:
                row.error = str(exc).splitlines()[0]
                if not worker.alive():
                    worker.close()
                    worker = Worker(threads=1)
            else:
                used = report.device
                row.passed = report.passed
                row.codes = [d.code for d in report.diagnosis]
                row.failing = [c.id for c in report.checks if c.status in ("fail", "error")]
            rows.append(row)
            on_row(row, len(todo))
    finally:
        worker.close()
    return Selftest(device=used, rows=rows, skipped=skipped)
