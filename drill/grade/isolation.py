"""Run the judge in a child process and survive whatever happens to it.

The CLI never imports torch. It starts the judge (drill.grade.judge), which starts the user
side; the judge enforces the user's time, output and memory limits and reports them as checks.
Here we only read the judge's events with a generous deadline: a judge that dies, hangs or
fails is an internal error of drill (the hint says to rerun with --debug), never the user's.
Every event is validated before use: a line that is not an event the judge writes ends the grade
as a failed ``isolation.protocol`` check (and that judge), never a traceback. The channels are
the judge's stdin and stdout, moved off 0 and 1 there, and this process, the judge and its
zygote are non-dumpable while they grade, so the user side cannot write into them through /proc.
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
from drill.text.messages import Ev, Msg
from drill.grade.report import Check, Report
from drill.grade.user import procs, sandbox

TAIL = 4096
STARTUP_LIMIT = 180.0  # seconds for the judge to import torch and drill (not the user's time)
JUDGE_MARGIN = 120.0  # seconds the judge may take beyond the user's time limit before it counts as stuck
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])

Event = Callable[[dict], None]


class JudgeFailed(DrillError):
    """drill's own grader failed: not a verdict on the user's code."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(Msg("internal error of drill's grader (not your code): {why}; rerun with --debug for the traceback", why=message), exit_code=ExitCode.FAILED)
        if detail:
            self.add_note(f"judge traceback:\n{detail}")  # shown as is: --debug's traceback, for drill's developers


class JudgeAttacked(JudgeFailed):
    """The judge was killed or stopped by a signal drill never sends it: only the user side could have."""

    def __init__(self, how: Ev):
        DrillError.__init__(self, how, exit_code=ExitCode.FAILED)
        self.how = how


ATTACK_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                            signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE})  # fmt: skip - a crash (SIGSEGV, SIGABRT) stays drill's fault
POLL = 0.25  # seconds between looks at whether the judge was stopped


class Malformed(Exception):
    """A line on the result channel that is not an event the judge writes; its message (an Ev) says what it was."""


def protocol_report(request: dict, what: Ev) -> Report:
    message = Ev("the grader's result channel carried a malformed or forged message ({what}); stopped the grade", what=what)
    return Report(task=str(request.get("task") or "?"), device=str(request.get("device") or "?"),
                  checks=[Check("isolation.protocol", "robustness", "error", message)])  # fmt: skip


def parse_event(line: bytes) -> dict:
    """One line of the result channel as an event whose fields the CLI may use (a report rebuilt
    as a :class:`Report`); Malformed for anything the judge does not write."""
    try:
        event = json.loads(line)
        if b"\\ud" in line.lower():  # an escaped surrogate: a lone one (from text the user's code made) prints nowhere
            event = _without_lone_surrogates(event)
    except (ValueError, RecursionError):
        raise Malformed(Ev("a line that is not JSON")) from None
    if not isinstance(event, dict):
        raise Malformed(Ev("JSON that is not an event"))
    kind = event.get("event")
    if kind == "start" and not (isinstance(event.get("task"), str) and isinstance(event.get("device"), str) and type(event.get("total")) is int):
        raise Malformed(Ev("a start event"))
    if kind == "usage_error" and not (isinstance(event.get("message"), str) and event.get("exit_code") in set(ExitCode)):
        raise Malformed(Ev("a usage error"))
    try:
        if kind == "check":
            Check.from_dict(event.get("check"))
        elif kind == "report":
            event["report"] = Report.from_wire(event.get("report"))
    except ValueError as exc:
        raise Malformed(Ev("a {kind} event: {why}", kind=kind, why=str(exc))) from None
    return event


def _without_lone_surrogates(value):
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


_GRADING = [0]  # live workers: this process stays non-dumpable while any grades


class Worker:
    """One judge process. ``grade`` may be called again while it lives (warm reuse).

    ``threads`` caps torch's intra-op threads of the judge and of the user side: the grader's
    tensors are tiny, and one thread is several times faster than many when the machine is busy.
    ``preload``: modules of :data:`drill.grade.spawn.PRELOADABLE` the zygote imports while the judge starts
    (triton for a kernel task), so each user side inherits them instead of importing them after the fork.
    """

    def __init__(self, threads: int | None = None, preload: tuple[str, ...] = ()):
        request_r, self._requests = os.pipe()
        self._results, result_w = os.pipe()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if threads:
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        _GRADING[0] += 1
        sandbox.non_dumpable()  # while it grades: the user side may not open /proc/<this process>/fd/1
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "drill.grade.judge", str(os.getpid()), str(threads or 0), ",".join(preload)],
            stdin=request_r,  # the judge moves both channels off 0 and 1: no descriptor number in its argv
            stdout=result_w,
            stderr=subprocess.PIPE,
            start_new_session=True,  # no Ctrl-C from the terminal: drill stops the grade itself
            env=env,
        )
        os.close(request_r)
        os.close(result_w)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._results, selectors.EVENT_READ)
        self._selector.register(self.proc.stderr, selectors.EVENT_READ)
        self._pending = b""
        self._tail = b""
        self._closed = False
        try:
            event = self._next_event(time.monotonic() + STARTUP_LIMIT)
        except JudgeFailed:
            self.close()
            raise
        except Malformed as exc:
            event = {"malformed": str(exc)}
        if event.get("event") != "ready":
            self.close()
            raise JudgeFailed(Ev("the judge did not start: unexpected {event}", event=str(event)))

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, request: dict, timeout: float, on_event: Event = lambda e: None) -> Report:
        """Send one request and collect its report; never raises for what the user's code does."""
        deadline = self._send({**request, "timeout": timeout}, timeout)
        try:
            while True:
                event = self._expect(deadline)
                if event.get("event") == "report":
                    return event["report"]
                on_event(event)
        except Malformed as exc:
            self._kill()  # its channel can no longer be trusted to be in step: the next grade starts a new judge
            self.close()
            return protocol_report(request, exc.args[0])
        except JudgeAttacked as exc:
            self._kill()
            self.close()
            message = Ev("drill's judge process {how} while your code ran: only your code could have done it; the grade fails", how=exc.how)
            return Report(task=str(request.get("task") or "?"), device=str(request.get("device") or "?"),
                          checks=[Check("isolation.judge-attacked", "robustness", "fail", message)])  # fmt: skip

    def bench(self, request: dict, timeout: float) -> dict:
        """Run a ``--bench`` request (see drill.grade.bench); its result as plain data."""
        deadline = self._send({**request, "kind": "bench", "timeout": timeout}, timeout)
        while True:
            try:
                event = self._expect(deadline)
            except Malformed as exc:
                self._kill()
                raise JudgeFailed(Ev("the judge sent {what}", what=exc.args[0])) from None
            if event.get("event") == "bench":
                return event.get("result")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _expect(self, deadline: float) -> dict:
        """The next event; usage and internal errors raised as DrillError."""
        event = self._next_event(deadline)
        kind = event.get("event")
        if kind == "usage_error":
            raise DrillError(Msg.from_wire(event["wire"]) if "wire" in event else event["message"], exit_code=ExitCode(event["exit_code"]))
        if kind == "internal_error":
            raise JudgeFailed(str(event.get("message", "unknown")), str(event.get("traceback", "")))
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
        self.proc.stderr.close()
        self._selector.close()
        _GRADING[0] -= 1
        if not _GRADING[0]:
            sandbox.non_dumpable(False)

    # --- reading the judge ------------------------------------------------------

    def _next_event(self, deadline: float) -> dict:
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                raise JudgeFailed(Ev("the judge stopped answering{output}", output=self._last_output()))
            ready = self._selector.select(min(remaining, POLL))
            if not ready and procs.describe(self.proc.pid)[1] in ("T", "t"):
                raise JudgeAttacked(Ev("was stopped (SIGSTOP)"))
            for key, _ in ready:
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
        return parse_event(line)

    def _kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _ended(self) -> JudgeFailed:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return JudgeFailed(Ev("the judge closed its result channel{output}", output=self._last_output()))
        if code < 0:
            try:
                how = Ev("was killed by {signal}", signal=signal.Signals(-code).name)
            except ValueError:
                how = Ev("was killed by signal {n}", n=-code)
            if -code in ATTACK_SIGNALS:
                return JudgeAttacked(how)
        else:
            how = Ev("exited with code {code}", code=code)
        return JudgeFailed(Ev("the judge process {how}{output}", how=how, output=self._last_output()))

    def _last_output(self) -> Ev:
        lines = self._tail.decode("utf-8", "replace").strip().splitlines()[-5:]
        return Ev(" (last output: {output})", output=" | ".join(line[:200] for line in lines)) if lines else Ev("{name}", name="")
