"""Today's plan: what bare ``drill`` shows, so the user always knows what to run next.

Everything here is read from the log (streak, review due dates, grade runs, accuracy);
nothing is stored. The one recommended command follows a fixed order: overdue reviews
first (forgetting is the expensive part), then the daily goal on the weakest topic, then
the next whiteboard task not yet passed. Due whiteboard tasks come right after due questions.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable

from drill.practice import review, task_review
from drill.history import stats, streak


@dataclass(frozen=True)
class Plan:
    report: streak.Report
    due_questions: int
    next_due: datetime | None  # the earliest future due date, when nothing is due now
    unseen_questions: int
    weakest_topic: str | None
    next_task: str | None  # the first whiteboard task (catalog order) not passed yet
    failed_tasks: list[str]
    due_tasks: list[str]  # whiteboard tasks whose FSRS card is due, most overdue first
    question_forecast: "Forecast | None" = None
    task_forecast: "Forecast | None" = None

    @property
    def goal_met(self) -> bool:
        return self.report.today_day.meets(self.report.settings.daily_goal)

    @property
    def next_command(self) -> str:
        if self.due_questions:
            return "drill review"
        if self.due_tasks:
            return "drill review --tasks"
        if self.failed_tasks:
            return f"drill whiteboard {self.failed_tasks[0]}"
        if not self.goal_met and self.weakest_topic:
            return stats.drill_command(self.weakest_topic)
        if not self.goal_met or not self.next_task:
            return "drill quiz"
        return f"drill whiteboard {self.next_task}"

    def to_json(self) -> dict:
        day, goal = self.report.today_day, self.report.settings.daily_goal
        return {
            "streak": self.report.streak.current if self.report.settings.enabled else None,
            "today": {"answered": day.answered, "whiteboard_passed": day.whiteboard_passed, "goal": goal, "met": self.goal_met},
            "due_questions": self.due_questions,
            "next_due": self.next_due.isoformat(timespec="seconds") if self.next_due else None,
            "unseen_questions": self.unseen_questions,
            "weakest_topic": self.weakest_topic,
            "due_tasks": self.due_tasks,
            "failed_tasks": self.failed_tasks,
            "next_task": self.next_task,
            "next_command": self.next_command,
            "forecast": {"questions": self.question_forecast.to_json() if self.question_forecast else None,
                         "tasks": self.task_forecast.to_json() if self.task_forecast else None},
        }


@dataclass(frozen=True)
class Forecast:
    """How many items fall due by the end of today, during tomorrow, and by the end of the 7th day (today included).

    Days are practice days (they start at ``day-start-hour``, like streaks); what is already overdue counts for today.
    """

    today: int
    tomorrow: int
    week: int

    def to_json(self) -> dict:
        return {"today": self.today, "tomorrow": self.tomorrow, "next_7_days": self.week}


def day_ends(now: datetime, day_start_hour: int) -> tuple[datetime, datetime, datetime]:
    """The ends (UTC) of today's practice day, of tomorrow's, and of the 7th day: local wall-clock times, so a DST change moves none."""
    local = now.astimezone().replace(tzinfo=None)
    end = local.replace(hour=day_start_hour, minute=0, second=0, microsecond=0)
    if end <= local:
        end += timedelta(days=1)
    return tuple((end + timedelta(days=k)).astimezone().astimezone(timezone.utc) for k in (0, 1, 6))  # type: ignore[return-value]


def forecast(dues: Iterable[datetime], now: datetime, day_start_hour: int) -> Forecast:
    """Count due dates into today / tomorrow / the next 7 days (one pass over the cards' due dates)."""
    today, tomorrow, week = day_ends(now, day_start_hour)
    counts = [0, 0, 0]
    for due in dues:
        counts[0] += due < today
        counts[1] += today <= due < tomorrow
        counts[2] += due < week
    return Forecast(*counts)


def forecasts(conn: sqlite3.Connection, known: set[str], task_ids: set[str], now: datetime | None = None) -> tuple[Forecast, Forecast]:
    """The questions' and the tasks' forecasts (``drill review`` shows them above the first question)."""
    now = now or datetime.now(timezone.utc)
    day_start = streak.settings(conn).day_start_hour
    return forecast(due_dates(conn, known).values(), now, day_start), forecast(task_dues(conn, task_ids), now, day_start)


def task_dues(conn: sqlite3.Connection, known: set[str]) -> list[datetime]:
    """The due date of each reviewed task in ``known``."""
    return [card.due for task, card in task_review.cards(conn).items() if task in known]


def due_dates(conn: sqlite3.Connection, known: set[str]) -> dict[str, datetime]:
    """When each loaded question that has a card (or a nudge) is next due."""
    return {qid: due for qid, due in review.due_dates(conn).items() if qid in known}


def next_due(dates: dict[str, datetime], now: datetime) -> datetime | None:
    """The earliest due date after ``now``: what "nothing is due" should name."""
    return min((when for when in dates.values() if when > now), default=None)


def plan(conn: sqlite3.Connection, known: set[str], task_states: list[tuple[str, str]], now: datetime | None = None) -> Plan:
    """The plan for ``now``; ``known`` are the loaded question ids, ``task_states`` (task, untried|failed|passed) in catalog order.

    A failed task that is also due counts once, as due: its card already brings it back.
    """
    now = now or datetime.now(timezone.utc)
    dates = due_dates(conn, known)
    due = sum(1 for when in dates.values() if when <= now)
    collected = stats.collect(conn, now)
    weakest = collected.weakest[0].key if collected.weakest else None
    due_tasks = task_review.due(conn, {task for task, _ in task_states}, now)
    failed = [task for task, state in task_states if state == "failed" and task not in due_tasks]
    untried = [task for task, state in task_states if state != "passed"]
    day_start = collected.report.settings.day_start_hour
    return Plan(
        report=collected.report,
        due_questions=due,
        next_due=None if due else next_due(dates, now),
        unseen_questions=len(known - set(dates)),
        weakest_topic=weakest,
        next_task=untried[0] if untried else None,
        failed_tasks=failed,
        due_tasks=due_tasks,
        question_forecast=forecast(dates.values(), now, day_start),
        task_forecast=forecast(task_dues(conn, {task for task, _ in task_states}), now, day_start),
    )
