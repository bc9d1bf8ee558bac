"""Diagnosis codes -> bank questions on the same concept, and the review nudges they cause.

A failing ``drill grade`` or whiteboard run is already a row of ``grade_runs``; that row is
the event. :func:`nudges` reads it back so that ``drill.review`` can make the linked questions
due now, until they are answered again. Nothing is written to ``review_state``, so the
rebuild-from-log design holds and history export/import carries the nudges for free.
Torch-free: ``drill review`` and ``drill stats`` use it; the links live with the codes' texts.
"""

from __future__ import annotations

import json
import sqlite3

def questions_for(codes) -> list[str]:
    """The linked question ids of ``codes`` (drill.diagnosis_codes), in order, without repeats; unknown codes link nothing."""
    from drill.diagnosis_codes import all_codes

    known = all_codes()
    return list(dict.fromkeys(qid for code in codes if code in known for qid in known[code].questions))


def nudges(conn: sqlite3.Connection) -> dict[str, str]:
    """question id -> UTC time of the latest failing grade run whose codes link to it."""
    latest: dict[str, str] = {}
    for codes, run_at in conn.execute("SELECT codes, run_at FROM grade_runs WHERE passed = 0 AND codes != '[]'"):
        for qid in questions_for(json.loads(codes)):
            latest[qid] = max(latest.get(qid, run_at), run_at)  # UTC ISO text sorts as time; no sort of every run
    return latest
