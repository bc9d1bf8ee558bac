"""Self-check of the whiteboard catalog: every reference solution passes, every template fails as not-implemented.

Parametrised over the tasks registered in drill.grade.tasks, so a task still in progress is
covered as soon as it lands; all of them are graded through one warm worker.
"""

from __future__ import annotations

import pytest

from drill.grade.run import make_request
from drill.grade.tasks import TASKS
from drill.grade.warm import WarmGrader
from drill.whiteboard import catalog

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def grader():
    with WarmGrader() as warm:
        yield warm


def test_every_registered_task_has_an_exercise():
    assert set(TASKS) <= set(catalog.load())


@pytest.mark.parametrize("task", sorted(TASKS))
def test_solution_passes(grader, task):
    report = grader.grade(make_request(catalog.get(task).solution, task=task, device="cpu"), 60)
    failing = [f"{c.id}: {c.message}" for c in report.checks if c.status in ("fail", "error")]
    assert report.passed, failing


@pytest.mark.parametrize("task", sorted(TASKS))
def test_template_is_not_implemented(grader, task):
    report = grader.grade(make_request(catalog.get(task).template, task=task, device="cpu"), 60)
    assert not report.passed
    assert [d.code for d in report.diagnosis] == ["not-implemented"]
