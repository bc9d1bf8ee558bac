"""A full mock interview under one clock: a 60-second pitch, concept questions down a follow-up chain,
then a whiteboard task graded live, ending with a scorecard per part saved to history.

Typer-free: the CLI resolves the options; rendering is in drill.views.interview_view. The concept
part stops when the chain ends or when only the whiteboard's share of the clock is left; the
whiteboard gets whatever time remains. Each part is recorded as it would be on its own (a ``pitch``
and a ``mock`` session of attempts, a ``whiteboard`` session with its grade runs and task rating),
and the scorecard is a session of kind ``interview`` whose options hold every part.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from drill.practice import quiz
from drill.history import store
from drill.practice.mock import PITCH_SECONDS

WHITEBOARD_SHARE = 0.5  # of the clock kept for the coding task
MIN_WHITEBOARD_S = 60.0  # less than this left: the task is skipped, and the scorecard says so


@dataclass
class Scorecard:
    """One entry per part played: what went well and what to drill next, each with its command."""

    minutes: int
    parts: list[dict] = field(default_factory=list)
    stopped: str | None = None  # interrupt | hangup | eof: the interview ended early

    def to_json(self) -> dict:
        return {"minutes": self.minutes, "stopped": self.stopped, "parts": self.parts}


def pitch_part(summary: quiz.Summary, topic: str) -> dict:
    result = summary.results[0] if summary.results else None
    covered = sum(result.matched) if result else 0
    return {"part": "pitch", "question": result.question.id if result else None, "passed": bool(result and result.passed),
            "covered": covered, "key_points": len(result.matched) if result else 0,
            "command": f"drill mock --pitch {topic}"}  # fmt: skip


def concepts_part(summary: quiz.Summary, topics: list[str]) -> dict:
    right = [r.question.id for r in summary.results if r.passed]
    wrong = [r.question.id for r in summary.results if not r.passed]
    return {"part": "concepts", "asked": len(summary.results), "right": right, "wrong": wrong,
            "command": f"drill quiz --topic {','.join(topics)}" if wrong else f"drill mock --topic {','.join(topics)}"}  # fmt: skip


def whiteboard_part(conn: sqlite3.Connection, outcome, since: str) -> dict:
    """The task's result and the diagnosis codes its failing saves hit during the interview."""
    codes: list[str] = []
    for (raw,) in conn.execute("SELECT codes FROM grade_runs WHERE task = ? AND source = 'whiteboard' AND run_at >= ? ORDER BY id",
                               (outcome.task, since)):  # fmt: skip
        codes += [c for c in json.loads(raw) if c not in codes and c != "not-implemented"]
    command = f"drill whiteboard {outcome.task}" + ("" if outcome.passed else " --solution")
    return {"part": "whiteboard", "task": outcome.task, "result": outcome.result, "seconds": round(outcome.seconds, 1),
            "hints": outcome.hints, "codes": codes, "command": command}  # fmt: skip


def skipped_whiteboard(task: str) -> dict:
    return {"part": "whiteboard", "task": task, "result": "no time", "command": f"drill whiteboard {task}"}


def save(conn: sqlite3.Connection, card: Scorecard, options: dict) -> int:
    """The scorecard as a session of kind ``interview``: history export and import carry it like any session."""
    session_id = store.start_session(conn, "interview", {**options, **card.to_json()})
    store.finish_session(conn, session_id, "complete" if card.stopped is None else "incomplete")
    return session_id


@dataclass
class Plan:
    pitch: object
    concepts: list
    exercise: object
    path: Path
    topics: list[str]
    minutes: int


def run(conn: sqlite3.Connection, plan: Plan, ask, whiteboard) -> Scorecard:
    """Play the three parts under one clock. ``ask(questions, settings, kind, stop_at)`` runs a quiz part and
    returns its Summary; ``whiteboard(exercise, path, minutes)`` runs the task and returns its Outcome."""
    deadline = time.monotonic() + 60 * plan.minutes
    card = Scorecard(plan.minutes)
    summary = ask([plan.pitch], quiz.Settings(time=PITCH_SECONDS), "pitch", deadline)
    card.parts.append(pitch_part(summary, plan.pitch.topic))
    if summary.stopped:
        card.stopped = summary.stopped
        return card
    concepts_end = deadline - WHITEBOARD_SHARE * 60 * plan.minutes
    summary = ask(plan.concepts, quiz.Settings(), "mock", concepts_end)
    card.parts.append(concepts_part(summary, plan.topics))
    if summary.stopped:
        card.stopped = summary.stopped
        return card
    left = deadline - time.monotonic()
    if left < MIN_WHITEBOARD_S:
        card.parts.append(skipped_whiteboard(plan.exercise.id))
        return card
    since = store.now_stamps()[0]
    outcome = whiteboard(plan.exercise, plan.path, left / 60)
    card.parts.append(whiteboard_part(conn, outcome, since))
    if outcome.stopped == "interrupted":
        card.stopped = "interrupt"
    return card


def play(conn: sqlite3.Connection, plan: Plan, bank, *, lang: str) -> Scorecard:
    """:func:`run` on this terminal (or pipe): the quiz readers and view for the questions, a watch-mode
    session with a warm judge for the task, the solution offered after it as in ``drill whiteboard``."""
    from drill.practice import play as quiz_play
    from drill.views import interview_view, solution_view, whiteboard_view
    from drill.views.console import out
    from drill.views.quiz_view import QuizView
    from drill.whiteboard import session, solutions

    tty = quiz_play.interactive()
    view = QuizView(out, lang, tty)

    def ask(questions: list, settings: quiz.Settings, kind: str, stop_at: float) -> quiz.Summary:
        interview_view.part(kind, lang)
        if tty:
            from drill.practice.terminal_input import TerminalReader

            reader = TerminalReader(lang, stop_at)
        else:
            from drill.practice.line_input import LineReader

            reader = LineReader()
        options = {"interview": True, "topic": plan.topics, "lang": lang}
        return quiz.run(conn, questions, reader, view, settings, kind=kind, options=options, stop_at=stop_at, lang=lang)

    def whiteboard(exercise, path: Path, minutes: float):
        interview_view.part("whiteboard", lang)
        board = whiteboard_view.SessionView(lang)
        board.starting(exercise, path, session.prepare(exercise, path), max(1, round(minutes)))
        def closing(outcome, review) -> None:
            whiteboard_view.print_outcome(outcome, "", lang, review)

        outcome, show = session.play(conn, exercise, path, board, closing, lang=lang, minutes=minutes)
        if show:
            solution_view.print_solution(solutions.load(exercise, path, bank), lang, path.name)
        return outcome

    return run(conn, plan, ask, whiteboard)
