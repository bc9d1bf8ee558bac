"""Mock interviews: dig from an L1 question down its ``follow_ups``, or pitch a topic in 60 s."""

from __future__ import annotations

import random

from drill.bank.load import Bank
from drill.errors import DrillError
from drill.text.messages import Msg

PITCH_SECONDS = 60


def _topics_text(topics: list[str]) -> str:
    return Msg(" in topic {topics}", topics=", ".join(topics)) if topics else ""


def chain(bank: Bank, topics: list[str] | None = None, seed: int | None = None) -> list:
    """An L1 opener (one with follow-ups when possible) and one unvisited follow-up after another."""
    rng = random.Random(seed)
    openers = [q for q in bank.select(levels=["L1"], topics=topics) if "pitch" not in q.tags]
    if not openers:
        raise DrillError("no L1 question to open a mock interview{where}", where=_topics_text(topics or []))
    deep = [q for q in openers if q.follow_ups]
    path = [rng.choice(deep or openers)]
    visited = {path[0].id}
    while True:
        options = [bank.questions[qid] for qid in path[-1].follow_ups if qid not in visited]
        if not options:
            return path
        path.append(rng.choice(options))
        visited.add(path[-1].id)


def pitch(bank: Bank, topics: list[str] | None = None, seed: int | None = None):
    """A random question tagged ``pitch``, optionally of ``topics``."""
    candidates = bank.select(topics=topics, tags=["pitch"])
    if not candidates:
        raise DrillError("no pitch question (tags: [pitch]){where}", where=_topics_text(topics or []))
    return random.Random(seed).choice(candidates)


def interview_task(statuses: list, gradable, track: str | None = None):
    """The whiteboard task of a full interview: the first one of ``track`` (every track without it) not passed
    yet, in catalog order, else the track's first; ``statuses``: catalog.statuses, ``gradable``: task ids."""
    from drill.whiteboard.catalog import TRACKS

    if track is not None and track not in TRACKS:
        raise DrillError("--track: {track!r} is not one of {tracks}", track=track, tracks=", ".join(TRACKS))
    tasks = [s for s in statuses if s.exercise.id in gradable and track in (None, s.exercise.track)]
    return next((s.exercise for s in tasks if s.state != "passed"), tasks[0].exercise)


def interview_questions(bank: Bank, topics: list[str], seed: int | None = None) -> tuple:
    """(pitch, concept chain) on ``topics``; the pitch comes from the whole bank when the topics have none."""
    try:
        opener = pitch(bank, topics, seed)
    except DrillError:
        opener = pitch(bank, None, seed)
    return opener, chain(bank, topics, seed)
