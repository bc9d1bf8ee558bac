"""Diagnosis names what is there and nothing else: two independent bugs are both named, and a bug's side
effects (a wrong shape, a NaN, two calls that differ) bring no second, unrelated code."""

from __future__ import annotations

import ast

import pytest

from drill.grade.battery import run_battery
from drill.grade.diagnose import combine
from drill.grade.reference import Variant
from drill.grade.tasks import detect
from whiteboard_impls import IMPLS, mutant

PAIRS = sorted((IMPLS / "pairs").glob("*.py"))


@pytest.mark.parametrize("path", PAIRS, ids=lambda p: p.stem)
def test_two_bugs_are_both_named(path):
    """``<code1>+<code2>[__<style>].py``: both codes confirmed, nothing else, not even as a candidate."""
    report = run_battery(path)
    assert not report.passed
    assert sorted(d.code for d in report.diagnosis) == sorted(path.stem.split("__")[0].split("+"))
    assert report.candidates == []


def test_the_pair_suite_spans_ten_tasks():
    tasks = {detect(n.name for n in ast.parse(path.read_text()).body if hasattr(n, "name")).name for path in PAIRS}
    assert len(tasks) >= 10, tasks


@pytest.mark.parametrize(
    "name", ["cross-qkv-source-swapped__1.py", "kv-cache-stale-state__1.py", "causal-blocks-self__1.py", "mask-ignored__1.py"]
)
def test_side_effects_bring_no_second_code(name):
    report = run_battery(mutant(name))
    assert [d.code for d in report.diagnosis] == [name.split("__")[0]]


def test_combine_merges_independent_knobs_only():
    assert combine(Variant(scale="none"), Variant(mask="after-softmax")) == Variant(scale="none", mask="after-softmax")
    assert combine(Variant(scale="none"), Variant(scale="d")) is None
