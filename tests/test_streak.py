"""Streak and freeze maths, exact cases and properties over random practice calendars."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from drill.history.streak import MAX_FREEZES, compute, practice_day

TODAY = date(2024, 6, 30)


def days(*offsets: int) -> set[date]:
    """Goal days given as offsets from TODAY (0 = today, 1 = yesterday)."""
    return {TODAY - timedelta(days=o) for o in offsets}


def run(first: int, last: int) -> set[date]:
    """Consecutive goal days from ``first`` days ago to ``last`` days ago."""
    return days(*range(last, first + 1))


calendars = st.sets(st.integers(0, 80), max_size=60).map(lambda s: days(*s))


def oracle(goals: set[date], today: date) -> tuple[int, int, int]:
    """(current, longest, freezes) by walking the gaps between goal days instead of every day."""
    current = longest = held = 0
    previous = None
    for day in sorted(goals):
        gap = (day - previous).days - 1 if previous else 0
        if gap == 1 and held:
            held -= 1
        elif gap:
            current = held = 0
        current += 1
        longest = max(longest, current)
        if current % 7 == 0:
            held = min(2, held + 1)
        previous = day
    if previous is None:
        return 0, 0, 0
    trailing = (today - previous).days - 1  # completed days missed since the last goal day
    if trailing == 1 and held:
        held -= 1
    elif trailing >= 1:
        current = held = 0
    return current, longest, held


def test_no_practice():
    s = compute(set(), TODAY)
    assert (s.current, s.longest, s.practice_days, s.freezes, s.frozen) == (0, 0, 0, 0, [])


def test_streak_is_alive_through_yesterday_while_today_is_in_progress():
    assert compute(run(5, 1), TODAY).current == 5
    assert compute(run(5, 0), TODAY).current == 6
    assert compute(run(5, 2), TODAY).current == 0  # yesterday missed, no freeze held


def test_a_day_ahead_of_today_never_makes_today_a_missed_day():
    """A record dated ahead (another machine's clock) counts when its day comes, and breaks nothing before."""
    ahead = TODAY + timedelta(days=3)
    s = compute(run(5, 1) | {ahead}, TODAY)
    assert (s.current, s.longest, s.frozen) == (5, 5, [])
    assert compute({date(9999, 12, 31)}, TODAY).current == 0  # and a far future date walks no days at all


def test_seven_days_earn_a_freeze_that_covers_one_missed_day():
    s = compute(run(9, 3) | days(1, 0), TODAY)  # 7 days, 2 days ago missed, then yesterday and today
    assert s.frozen == [TODAY - timedelta(days=2)]
    assert (s.current, s.longest, s.freezes) == (9, 9, 0)  # the frozen day keeps the streak but adds nothing


def test_six_days_earn_nothing_so_a_missed_day_breaks():
    s = compute(run(8, 3) | days(1), TODAY)
    assert (s.current, s.longest, s.frozen) == (1, 6, [])


def test_two_missed_days_break_even_with_freezes_held():
    s = compute(run(20, 3) | days(0), TODAY)  # 18 days: 2 freezes held, then 2 missed days
    assert (s.current, s.longest, s.freezes, s.frozen) == (1, 18, 0, [])


def test_at_most_two_freezes_are_held():
    assert compute(run(40, 0), TODAY).freezes == MAX_FREEZES


def test_missed_yesterday_is_frozen_provisionally_until_today_ends():
    s = compute(run(8, 2), TODAY)
    assert (s.current, s.frozen, s.freezes) == (7, [TODAY - timedelta(days=1)], 0)
    tomorrow = compute(run(8, 2), TODAY + timedelta(days=1))  # today passed without practice
    assert (tomorrow.current, tomorrow.frozen) == (0, [])


def test_two_freezes_cover_two_separate_missed_days():
    goals = run(30, 17) | run(15, 5) | run(3, 0)  # 14 days (2 freezes), miss, 11 days, miss, 4 days
    s = compute(goals, TODAY)
    assert s.frozen == [TODAY - timedelta(days=16), TODAY - timedelta(days=4)]
    assert s.current == s.longest == 29


def test_day_start_hour_moves_early_practice_to_the_day_before():
    assert practice_day(datetime(2024, 3, 10, 1, 0), 4) == date(2024, 3, 9)
    assert practice_day(datetime(2024, 3, 10, 4, 0), 4) == date(2024, 3, 10)
    assert practice_day("2024-03-10T01:00:00", 0) == date(2024, 3, 10)


@given(calendars)
def test_matches_a_gap_based_oracle(goals):
    s = compute(goals, TODAY)
    assert (s.current, s.longest, s.freezes) == oracle(goals, TODAY)
    assert s.practice_days == len(goals)


@given(calendars)
def test_frozen_days_are_single_missed_days_between_goal_days(goals):
    s = compute(goals, TODAY)
    assert 0 <= s.freezes <= MAX_FREEZES
    assert s.current <= s.longest
    for day in s.frozen:
        assert day not in goals and day < TODAY
        assert day - timedelta(days=1) in goals
        assert day + timedelta(days=1) in goals or day + timedelta(days=1) == TODAY


@given(calendars)
def test_current_streak_is_alive_iff_today_or_yesterday_counts(goals):
    s = compute(goals, TODAY)
    yesterday = TODAY - timedelta(days=1)
    assert s.alive == (TODAY in goals or yesterday in goals or yesterday in s.frozen)


@given(calendars, st.integers(0, 80))
def test_adding_practice_never_shortens_the_longest_streak(goals, extra):
    more = goals | days(extra)
    assert compute(more, TODAY).longest >= compute(goals, TODAY).longest


@given(calendars)
def test_longest_counts_the_goal_days_of_the_longest_run_of_goal_or_frozen_days(goals):
    s = compute(goals, TODAY)
    covered = goals | set(s.frozen)
    best = 0
    for day in goals:
        start = day
        while start - timedelta(days=1) in covered:
            start -= timedelta(days=1)
        best = max(best, sum(1 for d in goals if start <= d <= day))
    assert s.longest == best


@given(st.integers(1, 120), st.integers(0, 23), st.data())
def test_daily_practice_at_any_hour_after_day_start_is_an_unbroken_streak(n, hour, data):
    minutes = data.draw(st.lists(st.integers(0, 24 * 60 - 1), min_size=n, max_size=n))
    first = TODAY - timedelta(days=n - 1)
    stamps = [datetime.combine(first + timedelta(days=i), datetime.min.time()) + timedelta(hours=hour, minutes=m) for i, m in enumerate(minutes)]
    goals = {practice_day(t, hour) for t in stamps}
    s = compute(goals, TODAY)
    assert s.current == s.longest == s.practice_days == n
