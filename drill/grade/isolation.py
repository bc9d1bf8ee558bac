"""Run the worker in a child process and survive whatever the user's code does.

The parent never imports torch. It reads the child's result pipe and its stdout/stderr
together with a deadline: a timeout, a print flood, an exit or a crash each become an
error check naming what happened, with the last lines the code printed.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from drill.errors import DrillError, ExitCode
from drill.grade.codes import explain
from drill.grade.report import Check, Report

OUTPUT_CAP = 2 * 1024 * 1024  # bytes of user prints before the run counts as a flood
TAIL = 4096
STARTUP_LIMIT = 180.0  # seconds for the child to import torch and drill (not the user's time)
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])

Event = Callable[[dict], None]


class Stopped(Exception):
    """The child cannot finish the request; ``check`` says why."""

    def __init__(self, check_id: str, message: str):
        super().__init__(message)
        self.check = Check(check_id, "robustness", "error", message)


class Worker:
    """One worker process. ``grade`` may be called again while it lives (warm reuse).

    ``threads`` caps torch's intra-op threads: the grader's tensors are tiny, and one thread
    is several times faster than many when the machine is busy.
    """

    def __init__(self, threads: int | None = None):
        request_r, self._requests = os.pipe()
        self._results, result_w = os.pipe()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if threads:
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "drill.grade.worker", str(request_r), str(result_w)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(request_r, result_w),
            start_new_session=True,  # its own process group: killing it kills anything it spawned
            env=env,
        )
        os.close(request_r)
        os.close(result_w)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._results, selectors.EVENT_READ)
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._pending = b""
        self._tail = b""
        self._printed = 0
        self._closed = False
        try:
            event = self._next_event(time.monotonic() + STARTUP_LIMIT)
        except Stopped as exc:
            self.close()
            raise DrillError(f"the grading worker did not start: {exc}") from None
        if event.get("event") != "ready":
            self.close()
            raise DrillError(f"the grading worker did not start: unexpected {event}")

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, request: dict, timeout: float, on_event: Event = lambda e: None) -> Report:
        """Send one request and collect its report; never raises for what the user's code does."""
        report = Report(task=request.get("task") or "unknown", device=request.get("device", "auto"))
        try:
            deadline = self._send(request, timeout)
            while True:
                event = self._next_event(deadline, timeout)
                kind = event.get("event")
                if kind == "report":
                    return Report.from_wire(event["report"])
                if kind == "usage_error":
                    raise DrillError(event["message"], exit_code=ExitCode(event["exit_code"]))
                if kind == "start":
                    report.task, report.device = event["task"], event["device"]
                elif kind == "check":
                    report.checks.append(Check.from_dict(event["check"]))
                on_event(event)
        except Stopped as exc:
            self.close()
            report.checks.append(exc.check)
            on_event({"event": "check", "check": exc.check.to_dict()})
            report.diagnosis = explain(code for check in report.checks for code in check.codes)
            return report

    def bench(self, request: dict, timeout: float) -> dict:
        """Run a ``--bench`` request (see drill.grade.bench); its result as plain data."""
        try:
            deadline = self._send({**request, "kind": "bench"}, timeout)
            while True:
                event = self._next_event(deadline, timeout)
                if event.get("event") == "bench":
                    return event["result"]
                if event.get("event") == "usage_error":
                    raise DrillError(event["message"], exit_code=ExitCode(event["exit_code"]))
        except Stopped as exc:
            self.close()
            raise DrillError(f"--bench: {exc}", exit_code=ExitCode.FAILED) from None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _send(self, request: dict, timeout: float) -> float:
        self._printed, self._tail = 0, b""
        try:
            os.write(self._requests, (json.dumps(request) + "\n").encode())
        except BrokenPipeError:  # it died since the last request
            raise self._ended() from None
        return time.monotonic() + timeout

    def close(self) -> None:
        """Stop the worker and everything it started. Idempotent: a second close must not
        close fd numbers that another Worker (started by a background thread) may now own."""
        if self._closed:
            return
        self._closed = True
        for fd in (self._requests, self._results):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.proc.stdout.close()
        self._selector.close()

    # --- reading the child ------------------------------------------------------

    def _next_event(self, deadline: float, timeout: float | None = None) -> dict:
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Stopped(
                    "isolation.timeout",
                    f"still running after {timeout or STARTUP_LIMIT:g} s (an infinite loop?); stopped it. "
                    f"--timeout raises the limit.{self._last_output()}",
                )
            for key, _ in self._selector.select(remaining):
                data = os.read(key.fd, 65536)
                if key.fileobj == self._results:
                    if not data:
                        raise self._ended()
                    self._pending += data
                elif data:
                    self._output(data)
                else:
                    self._selector.unregister(key.fileobj)
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def _output(self, data: bytes) -> None:
        self._printed += len(data)
        self._tail = (self._tail + data)[-TAIL:]
        if self._printed > OUTPUT_CAP:
            raise Stopped(
                "isolation.output",
                f"printed more than {OUTPUT_CAP // 2**20} MiB; stopped it (a print in a loop?).{self._last_output()}",
            )

    def _ended(self) -> Stopped:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return Stopped("isolation.exit", f"closed its result channel without finishing.{self._last_output()}")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:  # a real-time signal has no name
                name = f"signal {-code}"
            what = " (a segmentation fault)" if name == "SIGSEGV" else ""
            return Stopped("isolation.crash", f"the process was killed by {name}{what}.{self._last_output()}")
        return Stopped(
            "isolation.exit", f"the process exited with code {code} before finishing (os._exit?).{self._last_output()}"
        )

    def _last_output(self) -> str:
        lines = self._tail.decode("utf-8", "replace").strip().splitlines()[-5:]
        return (" Last output: " + " | ".join(line[:200] for line in lines)) if lines else ""
