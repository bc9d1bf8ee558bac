"""`drill quiz` in a real pseudo-terminal (pexpect): single-key choice, multi-line open answers, timers, Ctrl-C."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import pexpect
import pytest

FIXTURE = str(Path(__file__).parent / "fixtures" / "quiz_bank.yaml")
QUIZ = ["-m", "drill", "quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--lang", "en", "--seed", "1"]
CPR_REQUEST = re.escape("\x1b[6n")  # prompt_toolkit asks where the cursor is; a real terminal answers
PROMPTS = {"fx-choice": "Which function", "fx-numeric": "1G fp32", "fx-open": r"sqrt\(d_k\)\?"}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


class Term:
    def __init__(self, args: list[str], home: Path):
        env = {**os.environ, "DRILL_HOME": str(home), "LANG": "en_US.UTF-8", "TERM": "xterm"}
        self.child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=15, dimensions=(40, 120), cwd=str(Path(__file__).parent.parent))

    def expect(self, *patterns) -> int:
        while True:
            i = self.child.expect([CPR_REQUEST, *patterns])
            if i:
                return i - 1
            self.child.send("\x1b[20;1R")

    def next_question(self) -> str:
        qids = list(PROMPTS)
        qid = qids[self.expect(*PROMPTS.values())]
        self.expect("left")  # the countdown toolbar is up: the prompt is ready for keys
        return qid

    def finish(self) -> int:
        self.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus


def rows(home: Path, sql: str) -> list[tuple]:
    return sqlite3.connect(home / "drill.db").execute(sql).fetchall()


def answer(term: Term, qid: str) -> None:
    """fx-choice right with one key (after an ignored one), fx-numeric wrong, fx-open on two lines then rated Good."""
    if qid == "fx-choice":
        term.child.send("x")
        term.child.send("b")
    elif qid == "fx-numeric":
        term.child.send("7 GiB\r")
    else:
        term.child.send("the variance grows\rso softmax saturates")
        term.expect("saturates")
        term.child.send("\x1b\r")  # Esc Enter submits; plain Enter made a new line
        term.expect("rate yourself")
        term.child.send("3")


def test_full_quiz_in_a_terminal(drill_home):
    term = Term([*QUIZ, "--level", "L1", "--count", "3"], drill_home)
    for _ in range(3):
        answer(term, term.next_question())
    term.expect(r"score 2/3\S*\s+L1 2/3")  # \S*: the end of bold
    assert term.finish() == 0  # completed: a wrong answer is practice, not a failed command
    got = rows(drill_home, "SELECT question_id, answer, correct, rating, timed_out FROM attempts")
    assert sorted(got) == [
        ("fx-choice", "B", 1, 3, 0),  # one key press, recorded as the letter
        ("fx-numeric", "7 GiB", 0, 1, 0),
        ("fx-open", "the variance grows\nso softmax saturates", None, 3, 0),
    ]
    assert rows(drill_home, "SELECT status FROM sessions") == [("complete",)]


def test_the_questions_clock_rings_and_says_so_at_zero(drill_home):
    term = Term([*QUIZ, "--type", "numeric", "--time", "1"], drill_home)
    term.next_question()
    term.expect("\x07")  # the bell at 0:00
    term.expect(r"0:00 time's up")
    term.child.send("4 GiB\r")  # a soft deadline: the answer is still taken, marked over time
    term.expect("over time")
    assert term.finish() == 0


def test_the_rating_keys_show_each_ratings_next_interval(drill_home):
    term = Term([*QUIZ, "--type", "open"], drill_home)
    term.next_question()
    term.child.send("the variance grows\x1b\r")
    term.expect("rate yourself")
    term.expect(r"1 Again 1m  ·  2 Hard 6m  ·  3 Good 10m  ·  4 Easy 8d")  # a new card, FSRS's default steps
    term.child.send("2")
    term.expect("score")
    assert term.finish() == 0


def test_mock_shows_the_interviews_clock(drill_home):
    term = Term(["-m", "drill", "mock", "--bank", FIXTURE, "--topic", "fx-deep", "--minutes", "3", "--lang", "en"], drill_home)
    term.expect("What is a KV cache")
    term.expect(r"interview 2:5\d left")
    term.child.sendintr()
    assert term.finish() == 130


def test_strict_deadline_submits_half_typed_text(drill_home):
    term = Term([*QUIZ, "--type", "numeric", "--time", "2", "--strict"], drill_home)
    term.next_question()
    term.child.send("4")  # "4" of "4 GiB", never submitted
    start = time.monotonic()
    term.expect("time ran out")
    assert time.monotonic() - start < 5
    term.finish()
    ((text, correct, rating, timed_out, seconds),) = rows(drill_home, "SELECT answer, correct, rating, timed_out, seconds FROM attempts")
    assert (text, correct, rating, timed_out) == ("4", 1, 1, 1)  # right text, but cut off: Again
    assert 1.5 < seconds < 5


def test_ctrl_c_after_two_answers_keeps_both(drill_home):
    term = Term([*QUIZ, "--count", "3"], drill_home)
    for _ in range(2):
        answer(term, term.next_question())
    term.next_question()
    term.child.sendintr()
    term.expect("stopped early")
    assert term.finish() == 130
    assert rows(drill_home, "SELECT COUNT(*) FROM attempts") == [(2,)]
    assert rows(drill_home, "SELECT status FROM sessions") == [("incomplete",)]


def test_closed_terminal_after_one_answer_keeps_it(drill_home):
    import signal

    term = Term([*QUIZ, "--count", "3"], drill_home)
    answer(term, term.next_question())
    term.next_question()
    term.child.kill(signal.SIGHUP)  # what the kernel sends when the terminal window closes
    term.child.expect(pexpect.EOF)
    term.child.close()
    assert rows(drill_home, "SELECT COUNT(*) FROM attempts") == [(1,)]
    assert rows(drill_home, "SELECT status FROM sessions") == [("incomplete",)]


def test_an_unreadable_number_is_asked_again_on_the_same_clock(drill_home):
    forms = str(Path(__file__).parent / "fixtures" / "answer_forms.yaml")
    term = Term(["-m", "drill", "quiz", "--bank", forms, "--topic", "fx-forms", "--type", "numeric", "--count", "1", "--lang", "en"], drill_home)
    term.expect("generated programs|reward model prefers")  # either numeric question: both are 29/38 ≈ 0.763
    term.expect("left")
    time.sleep(1.2)  # thinking before the first try
    term.child.send("four\r")
    term.expect(r"can't read 'four' as a number \(try 29/38")  # one line why, and no verdict
    term.expect("left")  # the same prompt again
    term.child.send("２９／３８\r")  # full width, as a Chinese input method types it
    term.expect("✔ right")
    term.expect(r"score 1/1")
    assert term.finish() == 0
    ((text, correct, rating, seconds),) = rows(drill_home, "SELECT answer, correct, rating, seconds FROM attempts")  # "four" was never graded
    assert (text, correct, rating) == ("２９／３８", 1, 3)
    assert seconds > 1.2  # timed from the first prompt, not restarted by the second
