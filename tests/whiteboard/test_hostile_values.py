"""Hostile values: what the user's code hands back runs code of its own when drill reads it (a dunder, a
property, ``__torch_function__``, ``named_modules``, exception formatting) or is too big to read (a
stride-0 view, ``10**400``). Each ends as a failed check in the user's name, with their line where
their code raised, never an internal error of drill's grader; one warm judge grades them all. Last, the
inputs drawn from the grade's seed: a file right only at the grader's fixed inputs fails."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from drill.grade.isolation import Worker, parse_event
from drill.grade.run import make_request
from drill.grade.user import wire

from whiteboard_impls import HOSTILE, IMPLS
from zh_text import english_words

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]

# file: (task, the first failing check, what its message says)
CASES = {
    "raising_iter": ("sdpa", "shape.cross", "output has shape [2, 3, 5, 4]"),  # read through list's own methods: its [q]
    "raising_len": ("sdpa", "shape.cross", "output has shape [2, 3, 5, 4]"),
    "raising_str": ("sdpa", "shape.4d", "raised Unprintable: <its message could not be printed: __str__ raised RuntimeError> (at raising_str.py:12"),
    "raising_getattr": ("sdpa", "shape.4d", "returned an object of its own, not a tensor"),
    "fake_tensor": ("sdpa", "shape.4d", "returned an object of its own, not a tensor"),
    "raising_property": ("mha", "load.contract", "raised RuntimeError: eps is not for you (at raising_property.py:15 in eps"),
    "raising_named_modules": ("mha", "load.contract", "(at raising_named_modules.py:12 in named_modules"),
    "torch_function_raises": ("sdpa", "shape.4d", "(at torch_function_raises.py:9 in __torch_function__"),
    "huge_view": ("sdpa", "shape.4d", "returned a view of 10,000,000,000 elements"),
    "huge_number": ("lr_schedule", "shape.returns-number", "returned the integer 10**400"),
    "nan_number": ("lr_schedule", "numerical.warmup", "got nan"),
    "huge_int_attribute": ("mha", "load.layout", "unrecognised projection layout"),  # the attribute is left out, not sent
    "lowered_nofile": ("sdpa", "shape.cross", "output has shape [2, 3, 5, 4]"),
    "raises_base_exception": ("sdpa", "shape.4d", "raised KeyboardInterrupt: not from the keyboard (at raises_base_exception.py:5"),
    "surrogate_message": ("sdpa", "shape.4d", "raised ValueError: bad ? text"),
    "surrogate_value": ("bpe", "shape.merges", "expected a list of (a, b) pairs"),
}


@pytest.fixture(scope="module")
def judge():
    with Worker(threads=1) as worker:
        yield worker


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_value_is_a_failed_check_in_the_users_name(judge, name):
    task, check_id, evidence = CASES[name]
    report = judge.grade(make_request(HOSTILE / f"{name}.py", task=task, device="cpu"), 60)  # JudgeFailed would be drill's
    assert not report.passed
    failing = next(c for c in report.checks if c.status in ("fail", "error"))
    assert (failing.id, evidence in failing.message) == (check_id, True), failing.message
    assert "internal error" not in json.dumps(report.to_dict())


def test_the_judge_still_grades_after_them(judge):
    assert judge.grade(make_request(IMPLS / "correct" / "sdpa_matmul.py", device="cpu"), 60).passed


@pytest.mark.parametrize(("name", "evidence"), [("huge_view", "10,000,000,000 elements"), ("surrogate_message", "bad ? text")])
def test_from_the_cli_it_fails_with_a_failed_attempt_recorded(tmp_path, name, evidence):
    """The whole way: exit 1, one JSON report, the failed run in the history; a lone surrogate in the
    user's message (which no UTF-8 stream can write) printed as '?' instead of a traceback."""
    env = {**os.environ, "DRILL_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "drill", "grade", str(HOSTILE / f"{name}.py"), "--device", "cpu", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["passed"] is False and evidence in found["checks"][0]["message"]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    with sqlite3.connect(tmp_path / "drill.db") as conn:
        assert conn.execute("SELECT task, passed FROM grade_runs").fetchall() == [("sdpa", 0)]


@pytest.mark.parametrize("name", ["huge_view", "huge_number", "fake_tensor", "torch_function_raises", "raising_str"])
def test_the_messages_read_in_chinese(judge, name):
    task = CASES[name][0]
    report = judge.grade(make_request(HOSTILE / f"{name}.py", task=task, device="cpu"), 60)
    failing = next(c for c in report.checks if c.status in ("fail", "error"))
    assert english_words(failing.text("zh")) == [], failing.text("zh")


def test_a_lone_surrogate_on_the_result_channel_is_replaced_not_fatal():
    event = parse_event(json.dumps({"event": "start", "task": "sd\ud800pa", "device": "cpu", "total": 1}).encode())
    assert event["task"] == "sd?pa"
    assert parse_event(json.dumps({"event": "start", "task": "ok \U0001F600", "device": "cpu", "total": 1}).encode())["task"] == "ok \U0001F600"


# --- probe inputs drawn from the seed -----------------------------------------------------------


def test_a_schedule_right_only_at_the_fixed_configurations_fails_on_the_drawn_one(judge):
    """lr_lookup.py passed 13/13 when every input was fixed; now the configuration drawn from the seed catches it."""
    for seed in (0, 41):
        report = judge.grade(make_request(HOSTILE / "lr_lookup.py", device="cpu", seed=seed), 60)
        assert [c.id for c in report.checks if c.status != "pass"] == ["numerical.drawn"], seed
        assert "expected" in next(c for c in report.checks if c.id == "numerical.drawn").message


def test_drawn_sizes_follow_the_seed_and_never_coincide():
    from drill.grade.context import Context

    def drawn(seed):
        return Context(path=Path("x.py"), entry=None, device=None, user=None, seed=seed).sizes(300, (1, 4), (1, 6), (2, 12), avoid=(3,))

    found = [drawn(seed) for seed in range(40)]
    assert found == [drawn(seed) for seed in range(40)]  # --seed N draws the same sizes again
    assert len(set(found)) > 20  # and other seeds other ones
    assert all(len(set(sizes)) == 3 and 3 not in sizes for sizes in found)


def test_the_wire_bounds_numbers_both_ways():
    """The user side refuses to send an int no tensor holds; the judge refuses to read one a forged side sends."""
    for n in (2**63, -(2**63) - 1, 10**400):
        with pytest.raises(wire.Unsendable, match="beyond any tensor's range"):
            wire.encode([1, n])
        with pytest.raises(wire.WireError, match="beyond int64"):
            wire.build({"$tuple": [n]}, [])
    assert wire.build(wire.encode([2**63 - 1, -(2**63)])[0]["value"], []) == [2**63 - 1, -(2**63)]


def test_the_wire_reads_subclasses_through_their_base_class():
    """A subclass's overrides never run while drill serialises it: the data is read as the base class holds it."""
    import torch

    class Loud(list):
        def __iter__(self):
            raise AssertionError("ran")

    class Number(int):
        def __index__(self):
            raise AssertionError("ran")

    class Trap(torch.Tensor):
        @classmethod
        def __torch_function__(cls, *args, **kwargs):
            raise AssertionError("ran")

    header, buffers = wire.encode(Loud([Number(3), torch.ones(2).as_subclass(Trap)]))
    assert header["value"] == [3, {"$t": 0}] and buffers == [torch.ones(2).numpy().tobytes()]


def test_a_descriptor_shortage_on_the_user_side_is_the_users():
    from drill.grade.user.server import Server

    found = Server(["cpu"]).blame(OSError(errno.EMFILE, "Too many open files"))
    assert found.kind == "user" and "RLIMIT_NOFILE" in str(found)
    assert Server(["cpu"]).blame(KeyError("drill's own bug")) is None  # no user frame: drill's fault stays drill's
