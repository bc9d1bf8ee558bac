"""Streak maths over practice days, plus the one-line summary shown after sessions.

A *practice day* is the local calendar date at the moment of practice, shifted by
the day-start hour (default 4, as in Anki) so that 01:00 counts for the day
before. It is computed from the local wall clock stored with each record, never
from today's time zone, so travelling or a DST change never moves a past day.

Freeze rules, applied walking the days in order from the first goal day to today:

* the streak length counts goal days only; a frozen day keeps it alive but adds 0;
* every 7th goal day of an unbroken streak earns a freeze, at most 2 held;
* a single missed day whose neighbours are goal days (or today, still in
  progress) is covered by spending one held freeze and shown as frozen; a freeze
  on yesterday is therefore provisional until today ends;
* a missed day that cannot be covered, or two or more missed days in a row,
  break the streak, and held freezes are lost with it;
* today is never a missed day: it is in progress until it ends.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from drill.text.messages import Msg

MAX_FREEZES = 2
DAYS_PER_FREEZE = 7


@dataclass(frozen=True)
class Settings:
    daily_goal: int = 5
    day_start_hour: int = 4
    enabled: bool = True


@dataclass(frozen=True)
class Day:
    """What happened on one practice day."""

    answered: int = 0
    whiteboard_passed: int = 0

    def meets(self, goal: int) -> bool:
        return self.answered >= goal or self.whiteboard_passed >= 1


@dataclass
class Streak:
    current: int = 0
    longest: int = 0
    practice_days: int = 0  # days on which the goal was met
    freezes: int = 0  # held now
    frozen: list[date] = field(default_factory=list)  # missed days covered by a freeze
    goal_days: set[date] = field(default_factory=set)

    @property
    def alive(self) -> bool:
        return self.current > 0


def practice_day(local_time: datetime | str, day_start_hour: int) -> date:
    """The practice day of a local wall-clock time (naive, or ISO text as stored)."""
    if isinstance(local_time, str):
        local_time = datetime.fromisoformat(local_time)
    return (local_time.replace(tzinfo=None) - timedelta(hours=day_start_hour)).date()


def today(day_start_hour: int, now: datetime | None = None) -> date:
    """The practice day of ``now`` (default: the machine's local clock), by its own wall clock."""
    return practice_day(now or datetime.now(), day_start_hour)


def compute(goals: set[date], current_day: date) -> Streak:
    """Apply the streak and freeze rules of this module's docstring."""
    result = Streak(practice_days=len(goals), goal_days=set(goals))
    if not goals:
        return result
    end = current_day  # a goal day ahead of today (another machine's clock) counts once its day comes
    run = held = 0
    day = min(goals)
    while day <= end:
        if day in goals:
            run += 1
            result.longest = max(result.longest, run)
            if run % DAYS_PER_FREEZE == 0:
                held = min(MAX_FREEZES, held + 1)
        elif day != end:
            after = day + timedelta(days=1)
            if (after in goals or after == end) and held:
                held -= 1
                result.frozen.append(day)
            else:
                run = held = 0
        day += timedelta(days=1)
    result.current, result.freezes = run, held
    return result


def tally(answered: dict[date, int], passed: dict[date, int]) -> dict[date, Day]:
    """Merge per-day counts of answers and whiteboard passes."""
    return {d: Day(answered.get(d, 0), passed.get(d, 0)) for d in answered.keys() | passed.keys()}


def goal_days(days: dict[date, Day], goal: int) -> set[date]:
    return {d for d, day in days.items() if day.meets(goal)}


# --- reading the database ------------------------------------------------------


def settings(conn: sqlite3.Connection) -> Settings:
    """The streak settings; ``drill.config`` validates them when they are set."""
    from drill import config

    return Settings(int(config.get(conn, "daily-goal")), int(config.get(conn, "day-start-hour")), config.get(conn, "streaks") != "off")


# Counts per local hour (kept by the store for attempts), then per date, split into hours before and after the day start.
PER_DAY = "SELECT substr(hour, 1, 10), substr(hour, 12, 2) < :start, SUM(n) FROM ({hours}) GROUP BY 1, 2"
ATTEMPT_HOURS = "SELECT hour, attempts AS n FROM hour_counts"
PASS_HOURS = "SELECT substr(local_time, 1, 13) AS hour, 1 AS n FROM grade_runs WHERE source IN ('whiteboard', 'notebook') AND passed = 1"


def practice_days(conn: sqlite3.Connection, day_start_hour: int) -> dict[date, Day]:
    """Answers and whiteboard passes per practice day, from the stored local wall clock."""

    def per_day(hours: str) -> dict[date, int]:
        counts: dict[date, int] = {}
        for day, early, n in conn.execute(PER_DAY.format(hours=hours), {"start": f"{day_start_hour:02d}"}):
            try:
                practice = date.fromisoformat(day) - timedelta(days=early)
            except (TypeError, ValueError, OverflowError):
                continue  # a stored time that is no date (a damaged or hand-edited row) counts for no day
            counts[practice] = counts.get(practice, 0) + n
        return counts

    return tally(per_day(ATTEMPT_HOURS), per_day(PASS_HOURS))


@dataclass
class Report:
    """Everything ``drill streak`` shows."""

    settings: Settings
    today: date
    days: dict[date, Day]
    streak: Streak

    @property
    def today_day(self) -> Day:
        return self.days.get(self.today, Day())

    def to_json(self) -> dict:
        s, day = self.streak, self.today_day
        return {
            "streaks_enabled": self.settings.enabled,
            "current_streak": s.current,
            "longest_streak": s.longest,
            "practice_days": s.practice_days,
            "freezes": s.freezes,
            "frozen_days": [d.isoformat() for d in s.frozen],
            "today": {"date": self.today.isoformat(), "answered": day.answered, "whiteboard_passed": day.whiteboard_passed,
                      "goal": self.settings.daily_goal, "met": day.meets(self.settings.daily_goal)},
        }


def report(conn: sqlite3.Connection, now: datetime | None = None) -> Report:
    cfg = settings(conn)
    days = practice_days(conn, cfg.day_start_hour)
    current = today(cfg.day_start_hour, now)
    return Report(cfg, current, days, compute(goal_days(days, cfg.daily_goal), current))


def progress(rep: Report) -> Msg:
    """Today's progress toward the goal, e.g. ``3/5 questions`` or ``goal met``."""
    day = rep.today_day
    if day.meets(rep.settings.daily_goal):
        return Msg("goal met")
    return Msg("{answered}/{goal} questions", answered=day.answered, goal=rep.settings.daily_goal)


def streak_line(conn: sqlite3.Connection, now: datetime | None = None) -> Msg | None:
    """One line for the end of a quiz, mock or whiteboard session; None when streaks are off."""
    rep = report(conn, now)
    if not rep.settings.enabled:
        return None
    s = rep.streak
    held = "" if not s.freezes else Msg(" · {n} freeze held", n=1) if s.freezes == 1 else Msg(" · {n} freezes held", n=s.freezes)
    if s.current == 1:
        return Msg("Streak: {days} day · today {progress}{freezes}", days=1, progress=progress(rep), freezes=held)
    return Msg("Streak: {days} days · today {progress}{freezes}", days=s.current, progress=progress(rep), freezes=held)
