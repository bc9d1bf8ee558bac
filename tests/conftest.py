"""Shared fixtures: every test gets its own empty DRILL_HOME and no extra banks.

``warm_judge``: `drill grade` run in-process (CliRunner) grades through one judge kept for the whole
session instead of starting a judge and a zygote (two torch imports) per test, as the whiteboard
keeps one warm. Each grade still forks a fresh user side from the pristine zygote, so what one
test's file does cannot reach another's. Only for tests about what a grade reports, never for tests
about the judge's own life (start-up, death, working directory, signals): those start their own.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest


@pytest.fixture(autouse=True)
def drill_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("drill_home")
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.delenv("DRILL_BANKS", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    return home


@pytest.fixture(scope="session")
def _session_judge():
    from drill.grade.isolation import Worker

    held: list[Worker] = []

    def judge() -> Worker:
        if held and not held[0].alive():  # a test's file took it down: the next test gets a new one
            held.pop().close()
        if not held:
            held.append(Worker(threads=1))
        return held[0]

    yield judge
    for worker in held:
        worker.close()


@pytest.fixture
def warm_judge(_session_judge, monkeypatch):
    from drill.grade import run

    monkeypatch.setattr(run, "Worker", lambda threads=None, preload=(): nullcontext(_session_judge()))  # no preload: user sides import triton
