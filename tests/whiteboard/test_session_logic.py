"""The whiteboard session's rules without torch or a terminal: a fake grader, keys and view."""

from __future__ import annotations

from fsrs import Rating

from drill.history import store
from drill.practice import task_review
from drill.grade.report import Check, Diagnosis, Report
from drill.whiteboard import catalog, session


def report(passed: bool, code: str | None = None) -> Report:
    checks = [Check("numerical.seed0", "numerical", "pass" if passed else "fail", "")]
    diagnosis = [Diagnosis(code, "m", "f", "m", "f")] if code else []
    return Report("sdpa", "cpu", checks, diagnosis)


class Grader:
    def __init__(self, *reports: Report):
        self.reports = list(reports)

    def grade(self, request, timeout):
        return self.reports.pop(0)


class Keys:
    def __init__(self, *keys):
        self.keys = list(keys)

    def read(self, timeout, wake=None):
        return self.keys.pop(0) if self.keys else None


class View:
    def __init__(self):
        self.events = []

    def __getattr__(self, name):
        return lambda *args: self.events.append((name, *args))


MINE = "def scaled_dot_product_attention(q, k, v, mask=None):\n    return q  # mine\n"  # defines the entry point: precheck lets it through


def run(tmp_path, grader, keys, *, record=False, limit_s=None):
    path = tmp_path / "x.py"
    path.write_text(MINE)
    view = View()
    s = session.Session(store.connect(), catalog.get("sdpa"), path, grader, view, keys, lang="en", minutes=20, record=record)
    if limit_s is not None:
        s.limit_s = limit_s
    return s.run(), view, s


def test_a_file_passing_from_the_start_is_no_solve_and_leaves_no_trace(tmp_path, drill_home):
    outcome, view, _ = run(tmp_path, Grader(report(True)), Keys("q"))
    assert not outcome.passed and outcome.stopped == "quit" and not outcome.reviewable
    assert ("already_passing",) in view.events
    assert session.record_outcome(store.connect(), outcome, 20) is None
    assert store.connect().execute("SELECT COUNT(*) FROM grade_runs").fetchone()[0] == 0
    ((options,),) = store.connect().execute("SELECT options FROM sessions WHERE kind = 'whiteboard'")
    assert '"result": "not attempted"' in options


def test_record_counts_a_passing_resume(tmp_path, drill_home):
    outcome, view, _ = run(tmp_path, Grader(report(True)), Keys(), record=True)
    assert outcome.passed and ("already_passing",) not in view.events


def test_time_running_out_without_a_save_is_not_attempted_and_not_rated(tmp_path, drill_home):
    outcome, view, _ = run(tmp_path, Grader(report(False, "scale-missing")), Keys(), limit_s=0.3)
    assert outcome.stopped == "time" and ("times_up",) in view.events and not outcome.reviewable
    assert outcome.result == "not attempted" and session.record_outcome(store.connect(), outcome, 20) is None
    assert store.connect().execute("SELECT COUNT(*) FROM task_reviews").fetchone()[0] == 0


def test_time_running_out_after_a_failing_save_rates_again(drill_home):
    outcome = session.Outcome("sdpa", False, 1200.0, "time", failing_saves=1, limit_s=1200.0)
    rating, interval = session.record_outcome(store.connect(), outcome, 20)
    assert rating == Rating.Again and interval.days >= 1  # tasks never come back the same day


def test_s_asks_first_then_ends_the_session_as_giving_up(tmp_path, drill_home):
    outcome, view, _ = run(tmp_path, Grader(report(False, "scale-missing")), Keys("s", "n", "s", "y"))
    assert ("solution_kept",) in view.events and outcome.stopped == "solution" and outcome.result == "solution"
    rating, _ = session.record_outcome(store.connect(), outcome, 20)
    assert rating == Rating.Again
    assert session.wants_solution(outcome, Keys(), view)


def test_hints_start_with_the_diagnosis_then_run_out(tmp_path, drill_home):
    _, view, s = run(tmp_path, Grader(report(False, "scale-missing")), Keys("h", "h", "h", "h", "q"))
    hints = [e for e in view.events if e[0] == "hint"]
    assert [number for _, number, _, _ in hints] == [1, 2, 3]
    assert "1/sqrt(d)" in hints[0][3]  # sdpa's hint on the scale comes first after scale-missing
    assert ("no_more_hints", 3) in view.events and s.hints_used == [1, 0, 2]


def test_reset_needs_y_and_keeps_a_backup(tmp_path, drill_home):
    _, view, _ = run(tmp_path, Grader(report(False, "scale-missing")), Keys("r", "n", "r", "y", "q"))
    assert ("reset_kept",) in view.events
    assert (tmp_path / "x.py").read_text() == catalog.get("sdpa").template.read_text()
    assert (tmp_path / "x.py.bak").read_text() == MINE
    assert session.backup_path(tmp_path / "x.py").name.startswith("x.py.2")  # a second backup never overwrites
