"""Diagnosis codes -> bank questions on the same concept, and the review nudges they cause.

A failing ``drill grade`` or whiteboard run is already a row of ``grade_runs``; that row is
the event. :func:`nudges` reads it back so that ``drill.practice.review`` can make the linked questions
due now, until they are answered again. Nothing is written to ``review_state``, so the
rebuild-from-log design holds and history export/import carries the nudges for free.
Torch-free: ``drill review`` and ``drill stats`` use it; the links live with the codes' texts.

:func:`notebook` is the 错题本 of ``drill mistakes``: questions whose latest attempt was not right,
tasks whose latest run failed, with the codes and next due date of each. It reads one row per
question (``question_last``) and one pass over the grade runs, never the attempt log.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

from drill.history.store import CORRECT_OF

SILENT_CODES = {"not-implemented"}  # an untouched template is not a mistake (as in drill stats)

def questions_for(codes) -> list[str]:
    """The linked question ids of ``codes`` (drill.diagnosis_codes), in order, without repeats; unknown codes link nothing."""
    from drill.diagnosis_codes import all_codes

    known = all_codes()
    return list(dict.fromkeys(qid for code in codes if code in known for qid in known[code].questions))


def nudges(conn: sqlite3.Connection) -> dict[str, str]:
    """question id -> UTC time of the latest failing grade run whose codes link to it."""
    latest: dict[str, str] = {}
    for codes, run_at in conn.execute("SELECT codes, run_at FROM grade_runs WHERE passed = 0 AND codes != '[]'"):
        for qid in questions_for(json.loads(codes)):
            latest[qid] = max(latest.get(qid, run_at), run_at)  # UTC ISO text sorts as time; no sort of every run
    return latest


@dataclass(frozen=True)
class WrongAnswer:
    question_id: str
    level: str
    topic: str
    type: str
    answer: str
    answered_at: str  # UTC ISO text
    local_time: str
    due: datetime | None = None


@dataclass(frozen=True)
class FailedTask:
    task: str
    codes: list[str]  # the diagnosis codes of its failing runs since its last pass, most frequent first
    failing_runs: int
    run_at: str  # UTC ISO text of the latest (failing) run
    local_time: str
    due: datetime | None = None  # its FSRS card's due date; None when it was only graded, never reviewed


@dataclass
class Notebook:
    questions: list[WrongAnswer] = field(default_factory=list)
    tasks: list[FailedTask] = field(default_factory=list)


def wrong_answers(conn: sqlite3.Connection) -> list[WrongAnswer]:
    """Questions whose latest attempt did not count as right (drill.history.store.CORRECT_OF), latest first."""
    rows = conn.execute(
        "SELECT a.question_id, a.level, a.topic, a.type, a.answer, a.answered_at, a.local_time"
        " FROM question_last l JOIN attempts a ON a.id = l.attempt_id"
        f" WHERE NOT ({CORRECT_OF.format(r='a')}) ORDER BY a.answered_at DESC, a.id DESC"
    )
    return [WrongAnswer(*row) for row in rows]


def failed_tasks(conn: sqlite3.Connection) -> list[FailedTask]:
    """Tasks (grade and whiteboard runs alike) whose latest run failed, latest first."""
    runs: dict[str, list] = {}  # task -> [codes counted since the last pass, failing runs, run_at, local_time]
    for task, passed, codes, run_at, local_time in conn.execute(
        "SELECT task, passed, codes, run_at, local_time FROM grade_runs ORDER BY run_at, id"
    ):
        if passed:
            runs.pop(task, None)
            continue
        entry = runs.setdefault(task, [{}, 0, run_at, local_time])
        for code in _codes(codes):
            entry[0][code] = entry[0].get(code, 0) + 1
        entry[1] += 1
        entry[2], entry[3] = run_at, local_time
    found = [
        FailedTask(task, sorted(counts, key=lambda c: (-counts[c], c)), n, run_at, local_time)
        for task, (counts, n, run_at, local_time) in runs.items()
    ]
    return sorted(found, key=lambda f: f.run_at, reverse=True)


def _codes(text: str) -> list[str]:
    try:
        codes = json.loads(text)
    except ValueError:
        return []
    return [c for c in codes if isinstance(c, str) and c not in SILENT_CODES] if isinstance(codes, list) else []


def notebook(
    conn: sqlite3.Connection,
    questions: dict,
    *,
    topics: list[str] | None = None,
    since: str | None = None,
    question_due: dict[str, datetime] | None = None,
    task_due: dict[str, datetime] | None = None,
) -> Notebook:
    """The mistakes to redo. ``questions``: the loaded bank by id (a question no longer in it is left out);
    ``topics``: only those topics, and tasks whose codes link to a question of one; ``since``: a local date
    ``YYYY-MM-DD``, only mistakes made on or after it; ``*_due``: next due dates by id."""
    question_due, task_due = question_due or {}, task_due or {}

    def recent(local_time: str) -> bool:
        return since is None or local_time >= since

    wrong = [
        WrongAnswer(**{**w.__dict__, "due": question_due.get(w.question_id)})
        for w in wrong_answers(conn)
        if w.question_id in questions and (not topics or w.topic in topics) and recent(w.local_time)
    ]

    def on_topic(task: FailedTask) -> bool:
        linked = questions_for(task.codes)
        return not topics or any(qid in questions and questions[qid].topic in topics for qid in linked)

    tasks = [
        FailedTask(**{**f.__dict__, "due": task_due.get(f.task)})
        for f in failed_tasks(conn)
        if on_topic(f) and recent(f.local_time)
    ]
    return Notebook(wrong, tasks)


def since_date(text: str | None) -> str | None:
    """``--since 2026-05-01`` as the local-date prefix that stored local times compare against."""
    if text is None:
        return None
    from datetime import date

    from drill.errors import DrillError

    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise DrillError("--since: {given!r} is not a date like 2026-05-01", given=text) from None
