"""Run the judge in a child process and survive whatever happens to it.

The CLI never imports torch. It starts the judge (drill.grade.judge), which starts the user
side; the judge enforces the user's time, output and memory limits and reports them as checks.
Here we only read the judge's events with a generous deadline: a judge that dies, hangs or
fails is an internal error of drill (the hint says to rerun with --debug), never the user's.
Every process drill starts dies with it: the judge gets SIGKILL when this process dies
(PR_SET_PDEATHSIG), and its zygote and user side follow it the same way.
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
from drill.grade.report import Report

TAIL = 4096
STARTUP_LIMIT = 180.0  # seconds for the judge to import torch and drill (not the user's time)
JUDGE_MARGIN = 120.0  # seconds the judge may take beyond the user's time limit before it counts as stuck
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
DEBUG_HINT = "rerun with --debug for the traceback"

Event = Callable[[dict], None]


class JudgeFailed(DrillError):
    """drill's own grader failed: not a verdict on the user's code."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(f"internal error of drill's grader (not your code): {message}; {DEBUG_HINT}", exit_code=ExitCode.FAILED)
        if detail:
            self.add_note(f"judge traceback:\n{detail}")


class Worker:
    """One judge process. ``grade`` may be called again while it lives (warm reuse).

    ``threads`` caps torch's intra-op threads of the judge and of the user side: the grader's
    tensors are tiny, and one thread is several times faster than many when the machine is busy.
    """

    def __init__(self, threads: int | None = None):
        request_r, self._requests = os.pipe()
        self._results, result_w = os.pipe()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if threads:
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "drill.grade.judge", str(request_r), str(result_w), str(os.getpid()), str(threads or 0)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(request_r, result_w),
            start_new_session=True,  # no Ctrl-C from the terminal: drill stops the grade itself
            env=env,
        )
        os.close(request_r)
        os.close(result_w)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._results, selectors.EVENT_READ)
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._pending = b""
        self._tail = b""
        self._closed = False
        try:
            event = self._next_event(time.monotonic() + STARTUP_LIMIT)
        except JudgeFailed:
            self.close()
            raise
        if event.get("event") != "ready":
            self.close()
            raise JudgeFailed(f"the judge did not start: unexpected {event}")

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, request: dict, timeout: float, on_event: Event = lambda e: None) -> Report:
        """Send one request and collect its report; never raises for what the user's code does."""
        deadline = self._send({**request, "timeout": timeout}, timeout)
        while True:
            event = self._expect(deadline)
            if event.get("event") == "report":
                return Report.from_wire(event["report"])
            on_event(event)

    def bench(self, request: dict, timeout: float) -> dict:
        """Run a ``--bench`` request (see drill.grade.bench); its result as plain data."""
        deadline = self._send({**request, "kind": "bench", "timeout": timeout}, timeout)
        while True:
            event = self._expect(deadline)
            if event.get("event") == "bench":
                return event["result"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _expect(self, deadline: float) -> dict:
        """The next event; usage and internal errors raised as DrillError."""
        event = self._next_event(deadline)
        kind = event.get("event")
        if kind == "usage_error":
            raise DrillError(event["message"], exit_code=ExitCode(event["exit_code"]))
        if kind == "internal_error":
            raise JudgeFailed(event.get("message", "unknown"), event.get("traceback", ""))
        return event

    def _send(self, request: dict, timeout: float) -> float:
        self._tail = b""
        try:
            os.write(self._requests, (json.dumps(request) + "\n").encode())
        except BrokenPipeError:  # it died since the last request
            raise self._ended() from None
        return time.monotonic() + timeout + JUDGE_MARGIN

    def close(self) -> None:
        """Stop the judge (and with it the zygote and any user side). Idempotent: a second close
        must not close fd numbers that another Worker (started by a background thread) may now own."""
        if self._closed:
            return
        self._closed = True
        for fd in (self._requests, self._results):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)  # EOF on its requests: it closes its zygote and exits
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        self.proc.stdout.close()
        self._selector.close()

    # --- reading the judge ------------------------------------------------------

    def _next_event(self, deadline: float) -> dict:
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                raise JudgeFailed(f"the judge stopped answering{self._last_output()}")
            for key, _ in self._selector.select(remaining):
                data = os.read(key.fd, 65536)
                if key.fileobj == self._results:
                    if not data:
                        raise self._ended()
                    self._pending += data
                elif data:
                    self._tail = (self._tail + data)[-TAIL:]
                else:
                    self._selector.unregister(key.fileobj)
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def _kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _ended(self) -> JudgeFailed:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return JudgeFailed(f"the judge closed its result channel{self._last_output()}")
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return JudgeFailed(f"the judge process {how}{self._last_output()}")

    def _last_output(self) -> str:
        lines = self._tail.decode("utf-8", "replace").strip().splitlines()[-5:]
        return (" (last output: " + " | ".join(line[:200] for line in lines) + ")") if lines else ""
