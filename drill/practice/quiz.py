"""Question selection and the answer → grade → record loop shared by quiz, review and mock.

The loop knows nothing of terminals: a *reader* supplies answers and ratings
(prompt_toolkit in a terminal, lines from stdin otherwise) and a *view* renders.
Every answer is written in its own transaction the moment it is given, so an
interrupt, a closed terminal or a crash loses nothing already typed.
"""

from __future__ import annotations

import random
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

from drill.practice import resume, review
from drill.history import store
from drill.practice.answers import LETTERS, Rating, judge, matched_key_points, objective_rating, parse_choice
from drill.errors import DrillError, StorageError

LEVEL_SECONDS = {"L1": 60, "L2": 90, "L3": 120}


class Hangup(KeyboardInterrupt):
    """The terminal went away (SIGHUP); handled like Ctrl-C."""


@dataclass(frozen=True)
class Reply:
    text: str
    seconds: float
    cut_off: bool = False  # a strict deadline submitted what was typed


class Reader(Protocol):
    def answer(self, q, limit: int, strict: bool) -> Reply: ...
    def rating(self, buttons: str = "") -> Rating: ...  # buttons: each rating with its next interval


class View(Protocol):
    def question(self, n: int, total: int, q, limit: int) -> None: ...
    def recap(self, n: int, total: int, q) -> None: ...  # with --reveal end: which question the next verdict is about
    def feedback(self, result: "Result") -> None: ...


@dataclass
class Settings:
    time: int | None = None  # per-question override of the limit, seconds
    strict: bool = False
    reveal: str = "each"  # each | end


@dataclass
class Result:
    question: object
    answer: str
    seconds: float
    limit: int
    cut_off: bool
    correct: bool | None  # None for open questions
    rating: Rating
    matched: list[bool] = field(default_factory=list)  # key points whose keywords the answer contains
    rated: bool = True  # False while an open answer awaits its self-rating
    unreadable: str | None = None  # scripted answers only: why it could not be read (an i18n key)
    note: str | None = None  # how a number was read (an i18n key), e.g. 4.29 GB in GiB
    values: dict = field(default_factory=dict)  # for ``unreadable`` and ``note``
    uid: str = ""
    intervals: dict = field(default_factory=dict)  # rating value -> next interval, while awaiting the self-rating
    missed: list[str] = field(default_factory=list)  # a choice answer: right options not given (letters)
    extra: list[str] = field(default_factory=list)  # a choice answer: options given that are wrong

    @property
    def over_time(self) -> bool:
        return self.cut_off or self.seconds > self.limit

    @property
    def passed(self) -> bool:
        """Counted right: an objective answer that is correct (in time: Good; over time: Hard), an open one rated Good or Easy.

        The rule of ``drill stats`` accuracy (drill.history.store.CORRECT_OF), so a score and the
        stats never disagree: a self-rated Hard (only partly recalled) counts in neither.
        """
        if self.correct is not None:
            return self.correct
        return self.rated and self.rating >= Rating.GOOD


@dataclass
class Summary:
    session_id: int
    kind: str
    total: int
    results: list[Result] = field(default_factory=list)
    stopped: str | None = None  # interrupt | hangup | eof when the session ended early
    out_of_time: bool = False  # a mock's overall clock ran out

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def by_level(self) -> dict[str, tuple[int, int]]:
        """(passed, answered) per level, in level order."""
        scores: dict[str, tuple[int, int]] = {}
        for r in sorted(self.results, key=lambda r: r.question.level):
            passed, answered = scores.get(r.question.level, (0, 0))
            scores[r.question.level] = (passed + r.passed, answered + 1)
        return scores


def time_limit(q, override: int | None = None) -> int:
    """``--time``, else the question's own ``time_limit``, else a default by level."""
    return override or q.time_limit or LEVEL_SECONDS[q.level]


def select(candidates: list, last: dict[str, int], due: dict[str, datetime], count: int, seed: int | None = None, now: datetime | None = None) -> list:
    """Up to ``count`` distinct questions: never seen or last answered Again first, then due ones, then the soonest due."""
    rng, now = random.Random(seed), now or datetime.now(timezone.utc)
    unique = list({q.id: q for q in candidates}.values())
    fresh = [q for q in unique if last.get(q.id, Rating.AGAIN) == Rating.AGAIN]
    never = datetime.max.replace(tzinfo=timezone.utc)
    seen = [q for q in unique if last.get(q.id, Rating.AGAIN) != Rating.AGAIN]
    due_now = [q for q in seen if due.get(q.id, never) <= now]
    later = sorted((q for q in seen if due.get(q.id, never) > now), key=lambda q: (due.get(q.id, never), q.id))
    rng.shuffle(fresh)
    rng.shuffle(due_now)
    return (fresh + due_now + later)[:count]


def pick(conn: sqlite3.Connection, candidates: list, count: int, seed: int | None = None) -> list:
    """:func:`select` with the history from the store; a question interrupted while shown comes first."""
    first = set(resume.interrupted_while_shown(conn))
    chosen = select(candidates, store.last_ratings(conn), review.due_dates(conn), count, seed)
    again = [q for q in {q.id: q for q in candidates}.values() if q.id in first]
    return (again + [q for q in chosen if q.id not in first])[:count]


def by_ids(bank, ids: list[str]) -> list:
    """``drill quiz --id``: exactly these questions, in the order given, each once (an unknown id is a usage error)."""
    return [bank.get(qid) for qid in dict.fromkeys(ids)]


def wrong_ones(conn: sqlite3.Connection, candidates: list, lang: str = "en") -> list:
    """``drill quiz --wrong``: the candidates whose latest attempt was not right, latest mistake first."""
    from drill.text.i18n import t
    from drill.practice.mistakes import wrong_answers

    by_id = {q.id: q for q in candidates}
    found = [by_id[w.question_id] for w in wrong_answers(conn) if w.question_id in by_id]
    if not found:
        raise DrillError(t("no_wrong", lang))
    return found


def resumed(conn: sqlite3.Connection, bank, lang: str = "en") -> tuple[resume.Interrupted, list]:
    """``drill quiz --resume``: the interrupted quiz and its remaining questions that the loaded banks still have."""
    from drill.text.i18n import t

    found = resume.latest(conn)
    if found is None:
        raise DrillError(t("nothing_to_resume", lang))
    questions = [bank.questions[qid] for qid in found.remaining if qid in bank.questions]
    if not questions:
        raise DrillError(t("resume_missing", lang, n=len(found.remaining)))
    return found, questions


def choice_difference(q, text: str) -> tuple[list[str], list[str]]:
    """(missed, extra) option letters of a choice answer: the right ones not given, the given ones not right."""
    given = parse_choice(text, len(q.choices))
    if given is None:
        return [], []
    return [LETTERS[i] for i in sorted(q.correct_set - given)], [LETTERS[i] for i in sorted(given - q.correct_set)]


def grade(q, reply: Reply, limit: int) -> Result:
    verdict = judge(q, reply.text)
    over = reply.cut_off or reply.seconds > limit
    rating = objective_rating(verdict.correct, over, reply.cut_off) if verdict.correct is not None else Rating.AGAIN
    missed, extra = choice_difference(q, reply.text) if q.type == "choice" else ([], [])
    return Result(q, reply.text, reply.seconds, limit, reply.cut_off, verdict.correct, rating, matched_key_points(q, reply.text),
                  rated=q.objective, unreadable=verdict.unreadable, note=verdict.note, values=verdict.values,
                  missed=missed, extra=extra)  # fmt: skip


def _record(conn: sqlite3.Connection, session_id: int, result: Result) -> None:
    """Save the answer now; an open answer is saved as Again until it is rated."""
    with store.transaction(conn):
        result.uid = store.insert_attempt(
            conn,
            session_id=session_id,
            question=result.question,
            answer=result.answer,
            correct=result.correct,
            rating=result.rating,
            seconds=result.seconds,
            time_limit=result.limit,
            timed_out=result.over_time,
        )
        if result.rated:  # an open answer's card waits for its self-rating (a crash before it: the next sync replays)
            review.record(conn, result.question.id, result.uid)


def _reveal(conn: sqlite3.Connection, result: Result, reader: Reader, view: View, lang: str) -> None:
    if not result.rated:
        result.intervals = review.next_intervals(conn, result.question.id, result.uid)
    view.feedback(result)
    if result.rated:
        return
    rating = reader.rating(rating_buttons(result.intervals, lang))
    with store.transaction(conn):
        store.set_rating(conn, result.uid, rating)
        review.record(conn, result.question.id, result.uid)
    result.rating, result.rated = rating, True


def rating_buttons(intervals: dict, lang: str) -> str:
    """``1 Again <1m  ·  2 Hard 6m  ·  3 Good 10m  ·  4 Easy 8d``: what each self-rating schedules, as Anki's buttons."""
    from drill.text.i18n import t
    from drill.text.intervals import interval_text

    return "  ·  ".join(f"{int(r)} {t(r.label, lang)} {interval_text(intervals[int(r)], lang)}" for r in Rating if int(r) in intervals)


def run(
    conn: sqlite3.Connection,
    questions: list,
    reader: Reader,
    view: View,
    settings: Settings,
    *,
    kind: str = "quiz",
    options: dict | None = None,
    stop_at: float | None = None,
    lang: str = "en",
) -> Summary:
    """Ask, grade and record each question; stop early at ``stop_at`` (a monotonic time) or on interrupt."""
    summary = Summary(store.start_session(conn, kind, options or {}), kind, len(questions))
    status, storage_failed = "incomplete", False
    resumable = kind == resume.RESUMABLE_KIND
    try:
        if resumable:
            resume.save_selection(conn, summary.session_id, [q.id for q in questions])
        for n, q in enumerate(questions, 1):
            if stop_at is not None and time.monotonic() >= stop_at:
                summary.out_of_time = True
                break
            limit = time_limit(q, settings.time)
            if resumable:
                resume.mark_shown(conn, summary.session_id, n)
            view.question(n, len(questions), q, limit)
            result = grade(q, reader.answer(q, limit, settings.strict), limit)
            _record(conn, summary.session_id, result)
            summary.results.append(result)
            if settings.reveal == "each":
                _reveal(conn, result, reader, view, lang)
        if settings.reveal == "end":
            for n, result in enumerate(summary.results, 1):
                view.recap(n, len(questions), result.question)
                _reveal(conn, result, reader, view, lang)
        if stop_at is not None and time.monotonic() >= stop_at:
            summary.out_of_time = True
        status = "complete"
    except Hangup:
        summary.stopped = "hangup"
    except KeyboardInterrupt:
        summary.stopped = "interrupt"
    except EOFError:
        summary.stopped = "eof"
    except StorageError as exc:
        storage_failed = True
        raise StorageError("{why}; the {n} answers given before it are saved", why=exc.message, n=len(summary.results)) from None
    finally:
        try:
            store.finish_session(conn, summary.session_id, status)
        except StorageError:
            if not storage_failed:  # else the session stays 'running': the disk cannot take even that
                raise
    return summary
