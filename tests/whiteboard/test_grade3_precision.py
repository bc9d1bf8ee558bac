"""Real code passes as written (issue 26): float32 chosen inside a float64 check is judged at float32 with a
note, never a real bug; a NaN both of the user's own outputs share is no layout failure; numbers that differ
never print as equal."""

from __future__ import annotations

import math

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.checks.compare import FLOAT32_NOTE, against_truth, same_output, shown

from whiteboard_impls import IMPLS


def float64_case(seed: int = 0):
    """(truth in float64, the same ops in float32 as float32, a softmax computed in float32 and returned as float64)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(6, 5, generator=gen, dtype=torch.float64) * 3
    truth = torch.softmax(x, dim=-1)
    narrow = torch.softmax(x.float(), dim=-1)
    user = torch.softmax(x.float(), dim=-1, dtype=torch.float32).double() @ torch.eye(5, dtype=torch.float64)
    return truth, narrow, user


def test_float32_inside_a_float64_check_passes_with_a_note():
    truth, narrow, user = float64_case()
    assert against_truth([("y", user, truth, truth)]).status == "fail"  # the float64 rule alone: 1e-10
    check = against_truth([("y (float64)", user, truth, truth, narrow)])
    assert check.status == "pass"
    assert check.message.endswith(f"; {FLOAT32_NOTE} (y)")


def test_a_float64_check_without_a_float32_reference_is_unchanged():
    truth, _, user = float64_case(1)
    assert against_truth([("y", user, truth, truth, None)]).status == "fail"
    assert "float32" not in against_truth([("y", truth.clone(), truth, truth, None)]).message


@pytest.mark.parametrize("error", [1e-3, 3e-5])
def test_a_real_error_is_not_forgiven_at_float32(error):
    truth, narrow, _ = float64_case(2)
    wrong = truth.clone()
    wrong[1, 2] += error  # far above float32's rounding on values ~1: a bug, not a precision
    check = against_truth([("y", wrong, truth, truth, narrow)])
    assert check.status == "fail"
    assert "[1, 2]" in check.message


def test_nan_and_a_narrower_output_are_never_judged_at_float32():
    truth, narrow, user = float64_case(3)
    nan = user.clone()
    nan[0, 0] = math.nan
    assert "NaN at [0, 0]" in against_truth([("y", nan, truth, truth, narrow)]).message
    assert against_truth([("y", user.float(), truth, truth, narrow)]).status == "fail"  # float32 out of a float64 call


def test_same_output_takes_shared_nan_as_equal():
    a = torch.tensor([[1.0, math.nan], [2.0, 3.0]])
    assert same_output(a, a.clone(), 1e-6)
    other = a.clone()
    other[0, 1] = 0.0
    assert not same_output(a, other, 1e-6)
    assert not same_output(a, a[:1], 1e-6)


def test_shown_never_prints_different_numbers_alike():
    assert shown(-1.33451234, -1.33451) == "-1.334512"
    assert shown(0.99999997, 1.0) == "0.99999997"
    assert shown(0.6135, 1.0) == "0.6135"


def test_hugging_face_router_in_float32_passes_and_says_so():
    report = run_battery(IMPLS / "correct" / "moe_router_float32_hf.py", task="moe")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    noted = {c.id for c in report.checks if FLOAT32_NOTE in c.message}
    assert noted == {"numerical.float64", "numerical.weights-sum-to-one", "gradient.aux-loss"}
    assert all(FLOAT32_NOTE not in c.message for c in report.checks if c.id.startswith("numerical.seed"))


def test_float32_router_without_renormalising_is_still_named():
    report = run_battery(IMPLS / "broken" / "moe-softmax-not-renormalised__float32_router.py", task="moe")
    assert [d.code for d in report.diagnosis] == ["moe-softmax-not-renormalised"]
    assert next(c for c in report.checks if c.id == "numerical.float64").status == "fail"


NO_SELF = '''
import math
import torch


def sliding_window_attention(q, k, v, window):
    t = q.shape[-2]
    pos = torch.arange(t, device=q.device)
    dist = pos[:, None] - pos[None, :]
    keep = (dist > 0) & (dist < window)  # a query no longer sees itself: row 0 sees nothing
    att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    return att.masked_fill(~keep, float("-inf")).softmax(dim=-1) @ v
'''


def test_a_mask_bug_is_not_also_a_contiguity_failure(tmp_path):
    path = tmp_path / "no_self.py"
    path.write_text(NO_SELF)
    report = run_battery(path, task="sliding_window")
    checks = {c.id: c for c in report.checks}
    assert not report.passed
    assert checks["shape.non-contiguous"].status == "pass", checks["shape.non-contiguous"].message
    assert "NaN" in checks["numerical.t12-window4"].message
