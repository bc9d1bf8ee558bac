"""A grading worker kept warm between saves, for whiteboard watch mode.

The worker imports torch once; each request re-imports the user's file fresh. A grade that
hangs, crashes or exits kills the worker, so a new one is started at once in the background
and the next save is graded as fast as the previous ones.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from drill.grade.isolation import Event, Worker
from drill.grade.report import Report

STARTUP_GRADE_TIMEOUT = 120.0


class WarmGrader:
    def __init__(self, warmup: dict | None = None, threads: int = 1):
        """``warmup``: a request graded once after start, so torch's first-call costs are paid early."""
        self._warmup, self._threads = warmup, threads
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._next: Future = self._pool.submit(self._start)

    def _start(self) -> Worker:
        worker = Worker(self._threads)
        if self._warmup:
            try:
                worker.grade(self._warmup, STARTUP_GRADE_TIMEOUT)
            except BaseException:
                worker.close()
                raise
        return worker

    def _worker(self) -> Worker:
        worker = self._next.result()  # raises DrillError when the worker cannot start
        if not worker.alive():
            worker.close()
            self._next = self._pool.submit(self._start)
            worker = self._next.result()
        return worker

    def grade(self, request: dict, timeout: float, on_event: Event = lambda e: None) -> Report:
        worker = self._worker()
        report = worker.grade(request, timeout, on_event)
        if not worker.alive():  # the user's code killed it: replace it before the next save
            self._next = self._pool.submit(self._start)
        return report

    def close(self) -> None:
        self._next.add_done_callback(lambda f: f.cancelled() or f.exception() or f.result().close())
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> WarmGrader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
