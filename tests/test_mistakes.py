"""Diagnosis codes link to bank questions, failing grade runs make them due, stats count the mistakes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from drill.practice import mistakes, review
from drill.history import stats, store
from drill.bank.load import load_bank
from drill.diagnosis_codes import all_codes, files
from drill.errors import DrillError

T0 = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


def test_every_code_links_only_existing_bundled_questions():
    bank = load_bank(None).questions
    missing = {code: qid for code, c in all_codes().items() for qid in c.questions if qid not in bank}
    assert not missing


def test_codes_come_from_the_shared_file_and_the_task_folders():
    names = {p.parent.name for p in files()}
    assert "checks" in names and {"flash", "rope"} <= names
    assert "flash-missing-rescale" in all_codes() and "scale-missing" in all_codes()


def test_a_code_defined_twice_names_its_file(tmp_path, monkeypatch):
    from drill import diagnosis_codes

    twice = tmp_path / "codes.yaml"
    twice.write_text(files()[0].read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(diagnosis_codes, "files", lambda: [files()[0], twice])
    diagnosis_codes.all_codes.cache_clear()
    try:
        with pytest.raises(DrillError, match=f"{twice}: code '.*' is defined twice"):
            diagnosis_codes.all_codes()
    finally:
        diagnosis_codes.all_codes.cache_clear()


def test_questions_for_keeps_order_and_drops_repeats():
    assert mistakes.questions_for(["scale-by-d", "scale-missing", "no-such-code"]) == [
        "attn-divide-by-dk", "attn-why-sqrt-dk", "attn-dot-product-variance", "attn-scale-factor-value",
    ]  # fmt: skip


def run(conn, passed, codes, when, task="sdpa", source="grade", seconds=3.0):
    store.record_grade_run(conn, task=task, file="x.py", source=source, passed=passed, codes=codes, seconds=seconds, now=when)


def test_failing_run_makes_linked_questions_due_until_answered():
    conn = store.connect()
    bank = load_bank(None).questions
    run(conn, False, ["mask-after-softmax"], T0)
    run(conn, True, [], T0 + timedelta(minutes=1))  # a pass does not nudge
    due = review.due_now(conn, set(bank), now=T0 + timedelta(minutes=2))
    assert due == ["mask-after-softmax-renorm", "mask-before-softmax"]
    with store.transaction(conn):
        store.insert_attempt(conn, session_id=None, question=bank["mask-before-softmax"], answer="", correct=None, rating=3,
                             seconds=1, time_limit=60, timed_out=False, now=T0 + timedelta(minutes=3))  # fmt: skip
    review.sync(conn)
    due = review.due_now(conn, set(bank), now=T0 + timedelta(minutes=4))
    assert due == ["mask-after-softmax-renorm"]  # answered after the run: back on its FSRS schedule


def test_frequent_mistakes_in_stats():
    conn = store.connect()
    run(conn, False, ["scale-missing", "mask-inverted"], T0)
    run(conn, False, ["scale-missing"], T0, source="whiteboard")
    run(conn, False, ["not-implemented"], T0)
    data = stats.collect(conn, now=T0).to_json()
    assert data["frequent_mistakes"] == [{"code": "scale-missing", "runs": 2}, {"code": "mask-inverted", "runs": 1}]
