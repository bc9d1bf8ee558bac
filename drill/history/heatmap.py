"""Where each day goes in a GitHub-style calendar, kept pure so placement is tested exactly.

The grid has one row per weekday (Monday first) and one column per week; the
last column is the week containing today and days after today stay empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from drill.history.streak import Day

WEEKS = 52


@dataclass(frozen=True)
class Cell:
    day: date
    level: int  # 0 (nothing) to 4
    frozen: bool = False
    today: bool = False


def start(today: date, weeks: int = WEEKS) -> date:
    """The Monday of the first column."""
    return today - timedelta(days=today.weekday(), weeks=weeks - 1)


def place(day: date, today: date, weeks: int = WEEKS) -> tuple[int, int] | None:
    """(row, column) of ``day``, or None when it falls outside the calendar."""
    first = start(today, weeks)
    if not first <= day <= today:
        return None
    return day.weekday(), (day - first).days // 7


def month_labels(today: date, weeks: int = WEEKS) -> list[tuple[int, str]]:
    """(column, "Jan") for each column whose Monday is the month's first Monday."""
    first = start(today, weeks)
    mondays = (first + timedelta(weeks=c) for c in range(weeks))
    return [(c, m.strftime("%b")) for c, m in enumerate(mondays) if m.day <= 7]


def level(day: Day, goal: int) -> int:
    """Intensity by questions answered, relative to the daily goal; a whiteboard pass meets it."""
    n = day.answered
    by_answers = 0 if n == 0 else 1 if n < goal else 2 if n < 2 * goal else 3 if n < 4 * goal else 4
    return max(by_answers, 2 if day.whiteboard_passed else 0)


def grid(days: dict[date, Day], frozen: set[date], today: date, goal: int, weeks: int = WEEKS) -> list[list[Cell | None]]:
    """Seven rows of ``weeks`` cells; None where a column runs past today."""
    rows: list[list[Cell | None]] = [[None] * weeks for _ in range(7)]
    first = start(today, weeks)
    for offset in range((today - first).days + 1):
        d = first + timedelta(days=offset)
        row, column = place(d, today, weeks)
        rows[row][column] = Cell(d, level(days.get(d, Day()), goal), d in frozen, d == today)
    return rows
