"""Exact placement of days in the 52-week calendar."""

from __future__ import annotations

from datetime import date, timedelta

from drill.history.heatmap import Cell, grid, level, month_labels, place, start
from drill.history.streak import Day

TODAY = date(2024, 3, 13)  # a Wednesday


def test_first_column_starts_on_the_monday_51_weeks_before_this_week():
    assert start(TODAY) == date(2023, 3, 20)
    assert start(date(2024, 3, 11)) == date(2023, 3, 20)  # Monday of the same week
    assert start(date(2024, 3, 17)) == date(2023, 3, 20)  # Sunday of the same week


def test_cell_placement():
    assert place(date(2023, 3, 20), TODAY) == (0, 0)
    assert place(date(2023, 3, 26), TODAY) == (6, 0)
    assert place(date(2023, 3, 27), TODAY) == (0, 1)
    assert place(date(2024, 1, 1), TODAY) == (0, 41)
    assert place(date(2024, 2, 29), TODAY) == (3, 49)
    assert place(TODAY, TODAY) == (2, 51)


def test_days_outside_the_calendar_have_no_cell():
    assert place(date(2023, 3, 19), TODAY) is None
    assert place(TODAY + timedelta(days=1), TODAY) is None


def test_month_labels_sit_on_each_months_first_monday():
    labels = month_labels(TODAY)
    assert labels[:3] == [(2, "Apr"), (6, "May"), (11, "Jun")]
    assert labels[-3:] == [(41, "Jan"), (46, "Feb"), (50, "Mar")]
    assert len(labels) == 12


def test_grid_marks_today_frozen_days_and_leaves_the_future_empty():
    days = {TODAY: Day(answered=12), date(2024, 3, 11): Day(answered=3)}
    rows = grid(days, {date(2024, 3, 12)}, TODAY, goal=5)
    assert [len(r) for r in rows] == [52] * 7
    assert rows[2][51] == Cell(TODAY, 3, today=True)
    assert rows[0][51] == Cell(date(2024, 3, 11), 1)
    assert rows[1][51] == Cell(date(2024, 3, 12), 0, frozen=True)
    assert rows[3][51] is None and rows[6][51] is None
    assert sum(c is not None for r in rows for c in r) == 51 * 7 + 3


def test_intensity_is_relative_to_the_daily_goal():
    assert [level(Day(n), 5) for n in (0, 1, 4, 5, 9, 10, 19, 20, 100)] == [0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert level(Day(0, whiteboard_passed=1), 5) == 2
    assert level(Day(12, whiteboard_passed=1), 5) == 3


def test_a_shorter_calendar_for_narrow_terminals():
    assert start(TODAY, weeks=4) == date(2024, 2, 19)
    assert place(date(2024, 2, 19), TODAY, weeks=4) == (0, 0)
    assert month_labels(TODAY, weeks=4) == [(2, "Mar")]
