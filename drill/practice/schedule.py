"""FSRS presets for the two kinds of review item, and the next interval of each rating.

Questions use FSRS's defaults (minute-long learning steps, as Anki): a missed fact comes
back in the same sitting. A whiteboard task takes 20 minutes, so it never comes back the
same day: no learning steps, a day at least, and a lower target retention (0.85), since
re-solving a task already learned costs far more than re-reading an answer.
Both schedulers are fuzz-free, so replaying the log always gives the same card. Questions may use
parameters fitted to the user's own history (drill.practice.optimize); tasks are too few to fit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from fsrs import Card, Rating, Scheduler

QUESTIONS = Scheduler(enable_fuzzing=False)


def questions(parameters) -> Scheduler:
    """:data:`QUESTIONS` with the user's own FSRS parameters (``drill review --optimize``)."""
    return Scheduler(parameters=tuple(parameters), enable_fuzzing=False)


TASKS = Scheduler(enable_fuzzing=False, learning_steps=(), relearning_steps=(), desired_retention=0.85, maximum_interval=365)

_UNITS = (  # (seconds in the unit, en suffix, zh suffix), largest first
    (365 * 86400, "y", "年"),
    (30 * 86400, "mo", "个月"),
    (86400, "d", "天"),
    (3600, "h", "小时"),
    (60, "m", "分钟"),
)


def preview(scheduler: Scheduler, card: Card, now: datetime) -> dict[Rating, timedelta]:
    """How long until ``card`` is due again after each rating given at ``now`` (the card is not changed)."""
    return {rating: scheduler.review_card(card, rating, review_datetime=now)[0].due - now for rating in Rating}


def interval_text(delta: timedelta, lang: str = "en") -> str:
    """Anki-style: ``<1m``, ``10m``, ``4d``, ``1.5mo``, ``2y`` (``10分钟``, ``4天`` in Chinese)."""
    seconds = delta.total_seconds()
    for size, en, zh in _UNITS:
        if seconds >= size:
            value = seconds / size
            number = f"{value:.1f}".rstrip("0").rstrip(".") if size >= 30 * 86400 else str(round(value))
            return f"{number}{zh if lang == 'zh' else en}"
    return "<1分钟" if lang == "zh" else "<1m"
