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


def preview(scheduler: Scheduler, card: Card, now: datetime) -> dict[Rating, timedelta]:
    """How long until ``card`` is due again after each rating given at ``now`` (the card is not changed)."""
    return {rating: scheduler.review_card(card, rating, review_datetime=now)[0].due - now for rating in Rating}
