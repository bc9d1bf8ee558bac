"""`drill mock --full` in a real pseudo-terminal: a pitch, a follow-up chain, a whiteboard task graded live
(a failing save, then a pass), the solution shown after the pass with `s`, and the scorecard saved to history."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from drill.history import store
from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = str(ROOT / "tests" / "fixtures" / "quiz_bank.yaml")
CPR_REQUEST = re.escape("\x1b[6n")  # prompt_toolkit asks where the cursor is; a real terminal answers
SOLUTION = catalog.get("sdpa").solution.read_text()
WRONG = SOLUTION.replace(" / math.sqrt(q.size(-1))", "")


def save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".swp-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class Term:
    def __init__(self, child):
        self.child = child

    def expect(self, pattern) -> None:
        while self.child.expect([CPR_REQUEST, pattern]) == 0:
            self.child.send("\x1b[20;1R")

    def answer(self, prompt: str, keys: str) -> None:
        self.expect(prompt)
        self.expect("left")  # the countdown toolbar is up: the prompt takes keys
        self.child.send(keys)


def test_full_interview_with_a_graded_task_and_the_solution_after_the_pass(tmp_path, drill_home):
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "160", "PYTHONPATH": str(ROOT), "LANG": "en_US.UTF-8", "TERM": "xterm"}
    args = ["-m", "drill", "mock", "--full", "--track", "attention", "--bank", FIXTURE, "--topic", "fx-deep,fx-more",
            "--minutes", "10", "--lang", "en", "--seed", "1"]  # fmt: skip
    term = Term(pexpect.spawn(sys.executable, args, cwd=str(tmp_path), env=env, encoding="utf-8", timeout=120, dimensions=(50, 160)))
    target = tmp_path / "drill_sdpa.py"
    try:
        term.expect(r"Mock interview · 10 min: a 60-second pitch, 3 concept questions with follow-ups, then sdpa")
        term.expect("Part 1 · pitch")
        term.answer("Pitch self-attention", "every token attends to every token with softmax\x1b\r")
        term.expect("rate yourself")
        term.child.send("3")
        term.expect("Part 2 · concepts")
        term.answer("What is a KV cache", "keys and values are cached to avoid recomputation\x1b\r")
        term.expect("rate yourself")
        term.child.send("3")
        term.answer("Bytes per token per layer", "16384\r")
        term.answer("Shape of the K cache", "(B, H, T, D)\r")
        term.expect("Part 3 · whiteboard")
        term.expect("not implemented yet")
        save(target, WRONG)
        term.expect("scale-missing")
        save(target, SOLUTION)
        term.expect("Solved sdpa")
        term.expect("any other key ends")
        term.child.send("s")
        term.expect("reference solution")
        term.expect(r"drill bank show attn-handwrite-sdpa")
        term.expect("Scorecard")
        term.expect(r"went well:\S* sdpa solved in 0:\d\d, 0 hints")
        term.expect(r"drill next:\S* mistakes on the way: scale-missing")
        term.child.expect(pexpect.EOF)
    finally:
        term.child.close(force=True)
    assert term.child.exitstatus == 0, term.child.before
    conn = store.connect()
    ((raw,),) = conn.execute("SELECT options FROM sessions WHERE kind = 'interview'")
    parts = {p["part"]: p for p in json.loads(raw)["parts"]}
    assert parts["pitch"]["question"] == "fx-pitch" and parts["pitch"]["passed"]
    assert parts["concepts"]["asked"] == 3 and set(parts["concepts"]["right"]) == {"fx-deep-1", "fx-deep-2", "fx-deep-3"}
    assert parts["whiteboard"]["result"] == "passed" and parts["whiteboard"]["codes"] == ["scale-missing"]
    kinds = [k for (k,) in conn.execute("SELECT kind FROM sessions ORDER BY id")]
    assert kinds == ["pitch", "mock", "whiteboard", "interview"]
    assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 4
    assert conn.execute("SELECT COUNT(*) FROM task_reviews WHERE task = 'sdpa'").fetchone()[0] == 1


def test_an_unknown_track_is_bad_input(drill_home):
    from typer.testing import CliRunner

    from drill.cli import app

    result = CliRunner().invoke(app, ["mock", "--full", "--track", "nope", "--lang", "en"])
    assert result.exit_code == 2 and "--track: 'nope' is not one of attention, positions" in result.output


def test_a_clock_spent_on_the_questions_skips_the_task_and_says_so(drill_home):
    from drill.practice import interview, quiz
    from drill.bank.load import load_paths
    from drill.views import interview_view
    from drill.views.console import out

    bank = load_paths([Path(FIXTURE)])
    plan = interview.Plan(bank.get("fx-pitch"), [bank.get("fx-deep-1")], catalog.get("sdpa"), Path("x.py"), ["fx-deep"], 1)
    conn = store.connect()

    def ask(questions, settings, kind, stop_at):  # a real quiz run whose answers took the whole clock
        return quiz.run(conn, questions, None, None, settings, kind=kind, stop_at=0.0)

    card = interview.run(conn, plan, ask, lambda *a: pytest.fail("no time was left for the whiteboard"))
    assert [p["part"] for p in card.parts] == ["pitch", "concepts", "whiteboard"]
    assert card.parts[2]["result"] == "no time" and card.parts[2]["command"] == "drill whiteboard sdpa"
    with out.capture() as shown:
        interview_view.print_scorecard(card, interview.save(conn, card, {}), "zh")
    assert "sdpa：没有剩余时间做白板题" in shown.get() and "没有回答概念题" in shown.get()
