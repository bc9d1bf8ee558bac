"""`drill mistakes` (the 错题本), `drill quiz --wrong` and `drill quiz --id` on a seeded history."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from drill.history import store
from drill.cli import app
from practice import add_attempt, write_bank

runner = CliRunner()
NOW = datetime.now().replace(microsecond=0)


@pytest.fixture
def bank(tmp_path):
    return str(write_bank(tmp_path / "bank", [("masks-q", "L1", "masks", "choice"), ("moe-q", "L2", "moe", "choice"),
                                              ("rag-q", "L1", "rag", "open"), ("data-q", "L1", "data", "choice")]))  # fmt: skip


def seed() -> None:
    conn = store.connect()
    with store.transaction(conn):
        add_attempt(conn, NOW - timedelta(days=2), topic="masks", correct=1, rating=3)
        add_attempt(conn, NOW - timedelta(hours=2), topic="masks", correct=0, rating=1)  # the latest is wrong: listed
        add_attempt(conn, NOW - timedelta(days=2), topic="moe", correct=0, rating=1)
        add_attempt(conn, NOW - timedelta(hours=1), topic="moe", correct=1, rating=3)  # wrong, then right: not listed
        add_attempt(conn, NOW - timedelta(days=40), topic="rag", type="open", correct=None, rating=2)  # self-rated Hard: not right
    stamp = lambda delta: (NOW - delta).astimezone(timezone.utc)  # noqa: E731
    store.record_grade_run(conn, task="causal", file="f.py", source="whiteboard", passed=0, codes=["causal-off-by-one", "not-implemented"], seconds=None, now=stamp(timedelta(hours=3)))
    store.record_grade_run(conn, task="causal", file="f.py", source="whiteboard", passed=0, codes=["causal-off-by-one", "mask-after-softmax"], seconds=None, now=stamp(timedelta(hours=2)))
    store.record_grade_run(conn, task="mha", file="f.py", source="grade", passed=0, codes=["scale-by-d-model"], seconds=None, now=stamp(timedelta(days=1)))
    store.record_grade_run(conn, task="mha", file="f.py", source="grade", passed=1, codes=[], seconds=None, now=stamp(timedelta(hours=5)))  # fixed since


def mistakes(*args: str) -> dict:
    result = runner.invoke(app, ["mistakes", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_lists_questions_last_answered_wrong_and_tasks_last_failed(bank):
    seed()
    got = mistakes("--bank", bank)
    assert [q["id"] for q in got["questions"]] == ["masks-q", "rag-q"]  # latest mistake first
    masks = got["questions"][0]
    assert masks["answer"] == "x" and masks["topic"] == "masks"
    assert datetime.fromisoformat(masks["due"]) > datetime.fromisoformat(masks["answered_at"])  # its FSRS card's next due
    ((task,),) = [got["tasks"]]
    assert task["task"] == "causal" and task["failing_runs"] == 2
    assert task["codes"] == ["causal-off-by-one", "mask-after-softmax"]  # most frequent first; an untouched template is no mistake
    assert task["due"] is None  # graded, never reviewed on the whiteboard: no card yet


def test_the_table_in_both_languages(bank):
    seed()
    en = runner.invoke(app, ["mistakes", "--bank", bank, "--lang", "en"]).stdout
    assert "Wrong answers (2)" in en and "Failed tasks (1)" in en and "drill quiz --wrong" in en and "drill whiteboard causal" in en
    assert "causal-off-by-one" in en and "moe-q" not in en
    zh = runner.invoke(app, ["mistakes", "--bank", bank, "--lang", "zh"]).stdout
    assert "答错的题（2）" in zh and "未通过的白板题（1）" in zh and "重做这些题" in zh
    for english in ("Wrong answers", "Failed tasks", "your answer", "Redo"):
        assert english not in zh


def test_topic_and_since_filter(bank):
    seed()
    assert [q["id"] for q in mistakes("--bank", bank, "--topic", "rag")["questions"]] == ["rag-q"]
    recent = mistakes("--bank", bank, "--since", (NOW - timedelta(days=7)).date().isoformat())
    assert [q["id"] for q in recent["questions"]] == ["masks-q"]  # rag-q was 40 days ago


def test_topic_keeps_the_tasks_whose_codes_link_to_it():
    seed()
    assert [t["task"] for t in mistakes("--topic", "masks")["tasks"]] == ["causal"]  # causal-off-by-one links to masks questions
    assert mistakes("--topic", "moe")["tasks"] == []


def test_nothing_to_redo_says_so_and_a_bad_date_is_one_line(bank):
    assert "No mistakes to redo" in runner.invoke(app, ["mistakes", "--bank", bank, "--lang", "en"]).stdout
    bad = runner.invoke(app, ["mistakes", "--since", "last week"])
    assert bad.exit_code == 2 and "--since: 'last week' is not a date" in bad.output and "Traceback" not in bad.output


def test_quiz_wrong_redoes_the_wrong_questions_only(bank):
    seed()
    result = runner.invoke(app, ["quiz", "--wrong", "--bank", bank, "--json"], input="a\n\n3\n" * 2)
    assert sorted(r["id"] for r in json.loads(result.stdout)["results"]) == ["masks-q", "rag-q"]
    none_left = runner.invoke(app, ["quiz", "--wrong", "--bank", bank, "--topic", "moe"])
    assert none_left.exit_code == 2 and "no wrong answers" in none_left.output


def test_quiz_id_asks_exactly_those_in_order(bank):
    result = runner.invoke(app, ["quiz", "--bank", bank, "--id", "data-q", "--id", "masks-q,data-q", "--json"], input="a\na\n")
    assert [r["id"] for r in json.loads(result.stdout)["results"]] == ["data-q", "masks-q"]
    unknown = runner.invoke(app, ["quiz", "--bank", bank, "--id", "masks"])
    assert unknown.exit_code == 2 and "no question with id 'masks'" in unknown.output


def test_a_long_list_shows_the_latest_and_says_how_many_more(tmp_path):
    specs = [(f"t{n:02d}-q", "L1", f"t{n:02d}", "choice") for n in range(35)]
    bank = str(write_bank(tmp_path / "many", specs))
    conn = store.connect()
    with store.transaction(conn):
        for n in range(35):
            add_attempt(conn, NOW - timedelta(minutes=n), topic=f"t{n:02d}", correct=0, rating=1)
    out = runner.invoke(app, ["mistakes", "--bank", bank, "--lang", "en"]).stdout
    assert "Wrong answers (35)" in out and "… and 5 more" in out
    assert "t00-q" in out and "t34-q" not in out  # the latest mistakes are the ones shown
    assert len(mistakes("--bank", bank)["questions"]) == 35  # JSON has them all
