"""Whiteboard sessions in a real pty as a daily habit: what counts as a solve, hints that follow the
diagnosis, the FSRS card a session leaves, `r` with its confirmation and backup, the live clock."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Card, Rating

from drill.practice import schedule, task_review
from drill.history import store
from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SDPA = catalog.get("sdpa")
SOLUTION = SDPA.solution.read_text()
WRONG = SOLUTION.replace(" / math.sqrt(q.size(-1))", "")
assert WRONG != SOLUTION


def save(path: Path, text: str) -> None:
    """An editor's atomic save: write a temporary file, rename it over the file."""
    tmp = path.with_name(path.name + ".swp-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def spawn(tmp_path, drill_home, *extra: str):
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "sdpa", "--file", str(tmp_path / "x.py"), *extra],
                         cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))  # fmt: skip


def count(table: str) -> int:
    return store.connect().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_solved_after_a_hint_is_rated_hard_and_comes_back_due(tmp_path, drill_home):
    child = spawn(tmp_path, drill_home)
    try:
        child.expect("not implemented yet")
        save(tmp_path / "x.py", WRONG)
        child.expect("scale-missing")
        child.send("h")
        child.expect(r"hint 1/3\S* Scale the scores by 1/sqrt\(d\)")  # the hint about the diagnosis comes first
        save(tmp_path / "x.py", SOLUTION)
        child.expect("Solved sdpa")
        child.expect(r"Rated \S*Hard")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    conn = store.connect()
    ((hints, failing, rating, reviewed_at),) = conn.execute("SELECT hints, failing_saves, rating, reviewed_at FROM task_reviews")
    assert (hints, failing, rating) == (1, 1, int(Rating.Hard))
    when = datetime.fromisoformat(reviewed_at)
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    hard = schedule.preview(schedule.TASKS, Card(due=when), when)[Rating.Hard]
    card = task_review.cards(conn)["sdpa"]
    assert abs(card.due - (when + hard)) < timedelta(seconds=1)
    assert task_review.due(conn, {"sdpa"}) == []
    assert task_review.due(conn, {"sdpa"}, now=card.due + timedelta(seconds=1)) == ["sdpa"]


def test_a_resumed_file_that_already_passes_is_not_a_solve(tmp_path, drill_home):
    (tmp_path / "x.py").write_text(SOLUTION)
    child = spawn(tmp_path, drill_home)
    try:
        child.expect("Resuming your file")
        child.expect("already passes")
        child.send("q")
        child.expect(pexpect.EOF)
        assert "Solved" not in child.before and "Rated" not in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 1
    assert count("grade_runs") == 0 and count("task_reviews") == 0


def test_a_resumed_passing_file_counts_with_record(tmp_path, drill_home):
    (tmp_path / "x.py").write_text(SOLUTION)
    child = spawn(tmp_path, drill_home, "--record")
    try:
        child.expect("Solved sdpa")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert [tuple(r) for r in store.connect().execute("SELECT passed FROM grade_runs")] == [(1,)]


def test_a_pass_after_a_failing_save_in_a_resumed_session_is_a_solve(tmp_path, drill_home):
    (tmp_path / "x.py").write_text(SOLUTION)
    child = spawn(tmp_path, drill_home)
    try:
        child.expect("already passes")
        save(tmp_path / "x.py", WRONG)
        child.expect("scale-missing")
        save(tmp_path / "x.py", SOLUTION)
        child.expect("Solved sdpa")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_reset_asks_first_and_keeps_a_backup(tmp_path, drill_home):
    target = tmp_path / "x.py"
    child = spawn(tmp_path, drill_home)
    try:
        child.expect("not implemented yet")
        save(target, WRONG)
        child.expect("scale-missing")
        child.send("r")
        child.expect("Reset .* to the template\\?")
        child.send("n")
        child.expect("not reset")
        assert target.read_text() == WRONG and not (tmp_path / "x.py.bak").exists()
        child.send("r")
        child.expect("Reset .* to the template\\?")
        child.send("y")
        child.expect("is the template again")
        child.expect("not implemented yet")  # the template is graded again
        assert target.read_text() == SDPA.template.read_text()
        assert (tmp_path / "x.py.bak").read_text() == WRONG
        save(target, SOLUTION)  # a second reset must not overwrite the first backup
        child.expect("PASSED")
        child.expect("any other key ends")  # the solution is offered after a pass
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_hints_run_out_and_ctrl_c_closes_like_q(tmp_path, drill_home):
    child = spawn(tmp_path, drill_home)
    try:
        child.expect("not implemented yet")
        for number in (1, 2, 3):
            child.send("h")
            child.expect(f"hint {number}/3")
        child.send("h")
        child.expect("No more hints")
        child.expect(r"19:5\d left")  # the clock keeps moving with no save
        time.sleep(1.2)
        child.sendintr()
        child.expect("Stopped after 0:")
        child.expect(pexpect.EOF)
        assert "Traceback" not in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 130
    assert count("task_reviews") == 0  # no save: no review
