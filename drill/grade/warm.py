"""A judge kept warm between saves, for whiteboard watch mode.

The judge and its zygote import torch once; every save is graded by a fresh user side forked
from the pristine zygote, so nothing one save does (disabling grad mode, patching torch) reaches
the next. If the judge itself dies, a new one is started at once in the background.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from drill.grade.isolation import Event, Worker
from drill.grade.kernel_env import preload_for
from drill.grade.precheck import precheck
from drill.grade.report import Report

STARTUP_GRADE_TIMEOUT = 120.0


class WarmGrader:
    def __init__(self, warmup: dict | None = None, threads: int = 1):
        """``warmup``: a request graded once after start, so the judge's first-call costs are paid early."""
        self._warmup, self._threads = warmup, threads
        self._pool = ThreadPoolExecutor(max_workers=1)  # its one thread lives as long as the grader
        self._next: Future = self._pool.submit(self._start)

    def _start(self) -> Worker:
        worker = Worker(self._threads, preload_for(self._warmup) if self._warmup else ())
        if self._warmup:
            try:
                worker.grade(self._warmup, STARTUP_GRADE_TIMEOUT)
            except BaseException:
                worker.close()
                raise
        return worker

    def _worker(self) -> Worker:
        worker = self._next.result()  # raises DrillError when the judge cannot start
        if not worker.alive():
            worker.close()
            self._next = self._pool.submit(self._start)
            worker = self._next.result()
        return worker

    def grade(self, request: dict, timeout: float, on_event: Event = lambda e: None) -> Report:
        """``request`` as made by drill.grade.run.make_request; a file that cannot parse never waits for the judge."""
        early = precheck(Path(request["path"]), request["task"], request["device"])
        if early is not None:
            return early
        worker = self._worker()
        try:
            return worker.grade(request, timeout, on_event)
        finally:
            if not worker.alive():  # replace it before the next save
                self._next = self._pool.submit(self._start)

    def close(self) -> None:
        self._next.add_done_callback(lambda f: f.cancelled() or f.exception() or f.result().close())
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> WarmGrader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
