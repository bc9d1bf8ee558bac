"""A notebook pass counts as a whiteboard solve does: source `notebook` in the history, the day's streak,
the catalog's best time, `drill stats`, and the task's FSRS card (rated once a practice day)."""

from __future__ import annotations

import pytest
from fsrs import Rating

from drill.history import stats, store, streak
from drill.practice import task_review
from drill.notebook.practice import Practice
from drill.whiteboard import catalog

pytest.importorskip("torch")

SOLUTION = catalog.get("sdpa").solution.read_text()
WRONG = SOLUTION.replace(" / math.sqrt(q.size(-1))", "")

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_a_notebook_pass_counts_like_a_whiteboard_solve(drill_home):
    conn, practice = store.connect(), Practice()
    assert not practice.grade(conn, "sdpa", WRONG, device="cpu").passed
    assert practice.grade(conn, "sdpa", SOLUTION, device="cpu").passed
    rows = conn.execute("SELECT source, passed, seconds FROM grade_runs ORDER BY id").fetchall()
    assert [(s, p) for s, p, _ in rows] == [("notebook", 0), ("notebook", 1)]
    assert rows[1][2] >= rows[0][2] > 0  # time since the kernel's first grade of the task, as a whiteboard session counts it
    assert streak.report(conn).today_day.whiteboard_passed == 1
    sdpa = next(s for s in catalog.statuses(conn) if s.exercise.id == "sdpa")
    assert sdpa.state == "passed" and sdpa.best_seconds == rows[1][2]
    assert [(w.task, w.runs, w.passed) for w in stats.collect(conn).whiteboard] == [("sdpa", 2, 1)]
    assert [r for (r,) in conn.execute("SELECT rating FROM task_reviews")] == [int(Rating.Easy)]  # no hint, one failing cell, well within 20 min
    assert "sdpa" in task_review.cards(conn)
    practice.grade(conn, "sdpa", SOLUTION, device="cpu")  # practice again the same day: no second rating
    assert conn.execute("SELECT COUNT(*) FROM task_reviews").fetchone()[0] == 1


def test_an_untouched_template_cell_is_no_attempt(drill_home):
    conn = store.connect()
    Practice().grade(conn, "sdpa", catalog.get("sdpa").template.read_text(), device="cpu")
    assert conn.execute("SELECT COUNT(*) FROM grade_runs").fetchone()[0] == 0
