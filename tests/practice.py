"""Helpers that write practice records with an explicit local wall clock and UTC offset."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from pathlib import Path

_uids = itertools.count()

BANK_YAML = """\
format_version: 1
questions:
{questions}
"""

QUESTION = """\
  - id: {id}
    level: {level}
    topic: {topic}
    type: {type}
    prompt: {{en: "Why {id}?", zh: "为什么 {id}？"}}
    answer: {{en: "Because {id}.", zh: "因为 {id}。"}}
{extra}    key_points:
      - {{en: "first {id}", zh: "第一 {id}", keywords: {{en: [a], zh: [甲]}}}}
      - {{en: "second {id}", zh: "第二 {id}", keywords: {{en: [b], zh: [乙]}}}}
"""


def add_attempt(conn, local: datetime, offset_min: int = 0, *, topic="masks", level="L1", type="choice", correct=1, rating=3,
                seconds=10.0, time_limit=30.0, timed_out=0, session_id=None, uid=None) -> str:
    uid = uid or f"a{next(_uids)}"
    utc = (local - timedelta(minutes=offset_min)).replace(tzinfo=timezone.utc)
    conn.execute(
        """INSERT INTO attempts (uid, session_id, question_id, question_hash, level, topic, type, answer, correct, rating,
                                 seconds, time_limit, timed_out, answered_at, local_time, utc_offset_min)
           VALUES (?, ?, ?, 'h', ?, ?, ?, 'x', ?, ?, ?, ?, ?, ?, ?, ?)""",
        (uid, session_id, f"{topic}-q", level, topic, type, correct, rating, seconds, time_limit, timed_out,
         utc.isoformat(timespec="seconds"), local.isoformat(timespec="seconds"), offset_min),
    )  # fmt: skip
    return uid


def add_run(conn, local: datetime, task="mha", passed=1, seconds=300.0, source="whiteboard", offset_min=0) -> None:
    utc = (local - timedelta(minutes=offset_min)).replace(tzinfo=timezone.utc)
    conn.execute(
        "INSERT INTO grade_runs (uid, task, file, source, passed, seconds, run_at, local_time, utc_offset_min) VALUES (?, ?, 'f.py', ?, ?, ?, ?, ?, ?)",
        (f"g{next(_uids)}", task, source, passed, seconds, utc.isoformat(timespec="seconds"), local.isoformat(timespec="seconds"), offset_min),
    )


def write_bank(folder: Path, specs: list[tuple[str, str, str, str]]) -> Path:
    """A bank file of (id, level, topic, type) questions; choice ones get two choices."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = {"choice": '    choices: [{en: "yes", zh: "是"}, {en: "no", zh: "否"}]\n    correct: 0\n', "open": "", "numeric": "    value: 8\n    unit: GB\n"}
    body = "".join(QUESTION.format(id=i, level=lv, topic=t, type=ty, extra=extra[ty]) for i, lv, t, ty in specs)
    path = folder / "bank.yaml"
    path.write_text(BANK_YAML.format(questions=body.rstrip("\n")), encoding="utf-8")
    return path
