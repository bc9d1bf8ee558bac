"""The public entry point: validate the request, grade in a child process, time it."""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path

from drill.errors import DrillError
from drill.grade.benchfit import BenchResult
from drill.grade.isolation import Event, Worker
from drill.grade.kernel_bench import KernelBenchResult
from drill.grade.kernel_env import preload_for, require_triton
from drill.grade.precheck import precheck
from drill.grade.report import Report
from drill.grade.tasks import TASKS

DEVICES = ("auto", "cpu", "cuda")
DEFAULT_TIMEOUT = 60.0
MIN_MEMORY = 256 << 20  # the user side's allowance beyond what torch already holds
MAX_SEED = 10**6  # short enough to type back; seed * 1000 + offset stays far inside torch's 64-bit seeds
BENCH_TIMEOUT = 600.0  # seconds for all sizes of --bench; the user's kernel may be slow at T = 4096


def grade_file(
    path: str | Path,
    *,
    task: str | None = None,
    device: str = "auto",
    seed: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    allow_builtins: bool = False,
    memory_limit: int | None = None,
    trace: bool = False,
    on_event: Event = lambda event: None,
) -> Report:
    """Grade ``path``; raises DrillError (exit 2) only when grading cannot start. Without ``seed``
    the probe inputs come from a fresh one (in the report), so no file can be right only on fixed inputs."""
    started = time.monotonic()
    request = make_request(path, task=task, device=device, seed=seed, timeout=timeout, allow_builtins=allow_builtins,
                           memory_limit=memory_limit)  # fmt: skip
    request["trace"] = trace
    report = precheck(Path(request["path"]), task, device)  # a syntax error never waits for torch
    if report is not None:
        report.seed = request["seed"]
    if report is None:
        with Worker(threads=1, preload=preload_for(request)) as worker:
            report = worker.grade(request, timeout, on_event)
    report.duration_s = time.monotonic() - started
    return report


def make_request(
    path: str | Path,
    *,
    task: str | None = None,
    device: str = "auto",
    seed: int | None = 0,
    timeout: float = DEFAULT_TIMEOUT,
    allow_builtins: bool = False,
    memory_limit: int | None = None,
) -> dict:
    """The worker request for ``path``, validated here so that a bad option never reaches the child
    (``seed=None``: a fresh seed)."""
    path = Path(path)
    if not path.is_file():
        raise DrillError("{path}: no such file", path=str(path))
    if task is not None and task not in TASKS:
        from drill.text.suggest import hint

        raise DrillError("unknown task {task!r}{hint} (tasks: {tasks})", task=task, hint=hint(task, TASKS), tasks=", ".join(TASKS))
    if task is not None:
        require_triton(task)
    if device not in DEVICES:
        raise DrillError("unknown device {device!r}; choose one of {devices}", device=device, devices=", ".join(DEVICES))
    if timeout <= 0:
        raise DrillError("--timeout must be positive")
    if seed is None:
        seed = fresh_seed()
    elif not 0 <= seed < MAX_SEED:
        raise DrillError("--seed must be between 0 and {last}", last=MAX_SEED - 1)
    if memory_limit is not None and memory_limit < MIN_MEMORY:
        raise DrillError("--memory-limit must be at least {mib} MiB", mib=MIN_MEMORY >> 20)
    return {"path": str(path.resolve()), "task": task, "device": device, "seed": seed, "allow_builtins": allow_builtins,
            "memory_limit": memory_limit}  # fmt: skip


def fresh_seed() -> int:
    return secrets.randbelow(MAX_SEED)


def parse_size(text: str) -> int:
    """Bytes in '4G', '512M', '1.5GiB' or '2000000000' (powers of 1024 for K, M, G, T)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not match:
        raise DrillError("--memory-limit: {given!r} is not a size such as 4G or 512M", given=text)
    return int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " "))


def bench_file(path: str | Path, *, task: str, device: str = "auto", seed: int | None = 0, max_t: int = 4096) -> BenchResult | KernelBenchResult:
    """Time the kernel in ``path`` in a fresh worker (all its threads: this measures speed, not correctness)."""
    request = make_request(path, task=task, device=device, seed=seed)
    del request["allow_builtins"], request["memory_limit"]
    with Worker() as worker:
        data = worker.bench({**request, "max_t": max_t}, BENCH_TIMEOUT)
    return KernelBenchResult(data) if data.get("kind") == "kernel" else BenchResult.from_wire(data)
