"""Aggregates of the attempt log for ``drill stats``, read from totals the store keeps, so history size does not matter.

Accuracy: an objective question (choice, numeric, shape) counts as correct when
its ``correct`` column is 1; an open question, which has no ``correct``, counts as
correct when the user's self-rating is Good or Easy (rating >= 3).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from drill.history import streak
from drill.history.store import CORRECT_OF

WEAKEST = 5
FREQUENT_MISTAKES = 5
MIN_ATTEMPTS_FOR_WEAKEST = 3  # one unlucky answer does not make a topic weak
WEEKS = 8  # the progress chart: this practice week and the 7 before it


@dataclass(frozen=True)
class Accuracy:
    key: str
    attempts: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.attempts if self.attempts else 0.0

    def to_json(self) -> dict:
        return {"attempts": self.attempts, "correct": self.correct, "accuracy": round(self.accuracy, 4)}


@dataclass(frozen=True)
class Timing:
    """Average seconds per question of a level against the average limit of the timed ones."""

    level: str
    attempts: int
    avg_seconds: float
    avg_limit: float | None
    timed_out: int

    def to_json(self) -> dict:
        limit = None if self.avg_limit is None else round(self.avg_limit, 2)
        return {"attempts": self.attempts, "avg_seconds": round(self.avg_seconds, 2), "avg_limit": limit, "timed_out": self.timed_out}


@dataclass(frozen=True)
class Whiteboard:
    task: str
    runs: int
    passed: int
    best_seconds: float | None  # fastest passing run


@dataclass
class Stats:
    report: streak.Report
    attempts: int = 0
    correct: int = 0
    by_level: list[Accuracy] = field(default_factory=list)
    by_topic: list[Accuracy] = field(default_factory=list)
    timing: list[Timing] = field(default_factory=list)
    whiteboard: list[Whiteboard] = field(default_factory=list)
    mistakes: list[tuple[str, int]] = field(default_factory=list)  # (diagnosis code, failing runs), most frequent first
    weeks: list[date] = field(default_factory=list)  # the Mondays of the progress chart's weeks, oldest first
    weekly: dict[str, list[Accuracy]] = field(default_factory=dict)  # topic -> one Accuracy per week (key: the Monday)

    @property
    def accuracy(self) -> float:
        return self.correct / self.attempts if self.attempts else 0.0

    @property
    def weakest(self) -> list[Accuracy]:
        """The lowest-accuracy topics with enough attempts to judge, worst first; a topic with every answer right is not weak."""
        judged = [a for a in self.by_topic if a.attempts >= MIN_ATTEMPTS_FOR_WEAKEST and a.correct < a.attempts]
        return sorted(judged, key=lambda a: (a.accuracy, -a.attempts, a.key))[:WEAKEST]

    def to_json(self) -> dict:
        return {
            **self.report.to_json(),
            "attempts": self.attempts,
            "accuracy": round(self.accuracy, 4),
            "accuracy_by_level": {a.key: a.to_json() for a in self.by_level},
            "accuracy_by_topic": {a.key: a.to_json() for a in self.by_topic},
            "time_by_level": {t.level: t.to_json() for t in self.timing},
            "weakest_topics": [{"topic": a.key, **a.to_json(), "command": drill_command(a.key)} for a in self.weakest],
            "whiteboard": [
                {"task": w.task, "runs": w.runs, "passed": w.passed, "best_seconds": w.best_seconds} for w in self.whiteboard
            ],
            "frequent_mistakes": [{"code": code, "runs": n} for code, n in self.mistakes],
            "weekly": {
                "weeks": [monday.isoformat() for monday in self.weeks],
                "by_topic": {
                    topic: [{"attempts": a.attempts, "correct": a.correct, "accuracy": round(a.accuracy, 4) if a.attempts else None} for a in weeks]
                    for topic, weeks in self.weekly.items()
                },
            },
        }


def drill_command(topic: str) -> str:
    return f"drill quiz --topic {topic}"


def _rollup(rows: list, key: int) -> dict[str, list]:
    """Sum the numeric columns of (level, topic, ...) rows by column ``key``, in key order."""
    totals: dict[str, list] = {}
    for row in rows:
        acc = totals.setdefault(row[key], [0] * (len(row) - 2))
        for i, value in enumerate(row[2:]):
            acc[i] += value or 0
    return dict(sorted(totals.items()))


def collect(conn: sqlite3.Connection, now: datetime | None = None) -> Stats:
    """The per-(level, topic) totals the store keeps (see ``store.SUMMARY_SCHEMA``), rolled up by level and by topic."""
    stats = Stats(streak.report(conn, now))
    rows = conn.execute("SELECT level, topic, attempts, correct, seconds, limit_sum, limited, timed_out FROM topic_totals").fetchall()
    levels, topics = _rollup(rows, 0), _rollup(rows, 1)
    stats.by_level = [Accuracy(k, n, ok) for k, (n, ok, *_) in levels.items()]
    stats.by_topic = [Accuracy(k, n, ok) for k, (n, ok, *_) in topics.items()]
    stats.timing = [
        Timing(k, n, secs / n, limits / limited if limited else None, late) for k, (n, _, secs, limits, limited, late) in levels.items()
    ]
    stats.attempts = sum(a.attempts for a in stats.by_level)
    stats.correct = sum(a.correct for a in stats.by_level)
    stats.whiteboard = [
        Whiteboard(*row)
        for row in conn.execute(
            "SELECT task, COUNT(*), SUM(passed), MIN(CASE WHEN passed THEN seconds END) FROM grade_runs"
            " WHERE source IN ('whiteboard', 'notebook') GROUP BY task ORDER BY task"
        )
    ]
    stats.mistakes = frequent_mistakes(conn)
    stats.weeks, stats.weekly = weekly(conn, stats.report.today, stats.report.settings.day_start_hour)
    return stats


def weekly(conn: sqlite3.Connection, today: date, day_start_hour: int, weeks: int = WEEKS) -> tuple[list[date], dict[str, list[Accuracy]]]:
    """Answers and right answers per topic and practice week (Monday to Sunday), the last ``weeks`` weeks.

    Reads only those weeks' attempts, through the index on local time: the cost is the recent volume, not the history's.
    """
    first = today - timedelta(days=today.weekday() + 7 * (weeks - 1))
    mondays = [first + timedelta(weeks=n) for n in range(weeks)]
    found: dict[str, list[Accuracy]] = {}
    rows = conn.execute(
        "SELECT topic, CAST((julianday(date(local_time, :shift)) - julianday(:first)) / 7 AS INTEGER) AS week, COUNT(*),"
        f" SUM({CORRECT_OF.format(r='attempts')}) FROM attempts WHERE local_time >= :start GROUP BY topic, week",
        {"shift": f"-{day_start_hour} hours", "first": first.isoformat(), "start": f"{first.isoformat()}T{day_start_hour:02d}:00:00"},
    )
    for topic, week, n, correct in rows:
        if week is not None and 0 <= week < weeks:  # a clock far ahead (another machine's), or no time at all, is no week here
            chart = found.setdefault(topic, [Accuracy(monday.isoformat(), 0, 0) for monday in mondays])
            chart[week] = Accuracy(mondays[week].isoformat(), n, correct or 0)
    return mondays, dict(sorted(found.items()))


def frequent_mistakes(conn: sqlite3.Connection, limit: int = FREQUENT_MISTAKES) -> list[tuple[str, int]]:
    """The diagnosis codes of failing grade and whiteboard runs, most frequent first."""
    return [
        (code, n)
        for code, n in conn.execute(
            "SELECT j.value, COUNT(*) AS n FROM grade_runs, json_each(grade_runs.codes) AS j"
            " WHERE passed = 0 AND j.value != 'not-implemented' GROUP BY j.value ORDER BY n DESC, j.value LIMIT ?",
            (limit,),
        )
    ]
