"""How the trace words a difference, in both languages: each finding on a tensor built to have exactly it."""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch
from zh_text import english_words

from drill.grade.trace_match import PAIRS, Case, differs, scaled
from drill.grade.tracing import scale_factors
from drill.text.messages import translated

GEN = torch.Generator().manual_seed(3)
SCORES = torch.randn(2, 5, 7, generator=GEN, dtype=torch.float64)
WEIGHTS = torch.softmax(SCORES, dim=-1)
ATTENTION = Case(None, (), [], factors=scale_factors(4), unit=PAIRS)
PLAIN = Case(None, (), [])


def both(user, expected, case=PLAIN, step=None):
    """The finding as the English and the Chinese screen show it, and whether it is a scale."""
    found = differs(user, expected, case, step)
    said = SimpleNamespace(en=str(found), zh=translated(found, "zh"), scale=scaled(found))
    assert english_words(said.zh) == [], said.zh
    return said


def test_a_known_scale_factor_is_named_with_its_meaning():
    said = both(SCORES * math.sqrt(4), SCORES, ATTENTION)
    assert said.scale and "2 ×" in said.en and "never scaled by 1/√d" in said.en
    assert "2 倍" in said.zh and "没有乘 1/√d" in said.zh


def test_an_unknown_factor_is_still_a_scale_without_a_meaning():
    said = both(SCORES * 3, SCORES, ATTENTION)
    assert said.scale and said.en == "yours is 3 × the expected"


def test_an_offset_is_named_with_its_sign():
    said = both(SCORES + 1, SCORES)
    assert "+1 everywhere" in said.en and "多 1" in said.zh
    assert "-0.5 everywhere" in both(SCORES - 0.5, SCORES).en


def test_overflow_where_the_reference_is_finite():
    user = WEIGHTS.clone()
    user[0, 1, :] = float("nan")
    user[1, 0, 2] = float("inf")
    said = both(user, WEIGHTS)
    assert "8 values are inf or NaN" in said.en and "溢出" in said.zh


def test_masked_entries_are_pairs_only_for_attention():
    expected = SCORES.masked_fill(torch.eye(5, 7, dtype=torch.bool), float("-inf"))
    assert "10 masked (query, key) pairs are not masked" in both(SCORES, expected, ATTENTION).en
    assert "10 masked entries are not masked" in both(SCORES, expected).en


def test_a_sum_over_the_wrong_dim():
    said = both(torch.softmax(SCORES, dim=-2), WEIGHTS, ATTENTION)
    assert "sums to 1 over dim -2" in said.en and "(keys)" in said.en and "第 -2 维" in said.zh


def test_zeros_that_get_weight_are_a_mask_problem_only_for_probabilities():
    positions = torch.arange(6, dtype=torch.float64)[:, None].expand(6, 5)  # a table with zeros in it, not weights
    assert "weight" not in both(positions + 1, positions).en
    allowed = torch.ones(5, 7, dtype=torch.bool).tril()
    expected = torch.softmax(SCORES.masked_fill(~allowed, float("-inf")), -1)
    unmasked = torch.softmax(SCORES, -1)
    said = both(unmasked, expected, ATTENTION)
    assert "(query, key) pairs the mask removes get weight in yours" in said.en and "分到了权重" in said.zh


def test_a_reshape_where_a_transpose_was_needed():
    user = SCORES.transpose(1, 2).reshape(SCORES.shape)
    said = both(user, SCORES)
    assert "another arrangement" in said.en and "transpose" in said.zh


def test_a_log_of_zero_is_an_underflow_where_nothing_is_masked():
    user = torch.log_softmax(SCORES, -1)
    user[0, 0, 0] = float("-inf")
    said = both(user, torch.log_softmax(SCORES, -1))
    assert "1 value is -inf where the expected is finite: a log of 0" in said.en and "下溢" in said.zh
    masked = SCORES.masked_fill(torch.eye(5, 7, dtype=torch.bool), float("-inf"))
    assert "masked" in both(SCORES.masked_fill(torch.ones(5, 7, dtype=torch.bool).triu(), float("-inf")), masked, ATTENTION).en


def test_a_reversed_step_is_named_as_reversed():
    descending = WEIGHTS.sort(dim=-1, descending=True).values
    said = both(descending.flip(-1), descending)
    assert "reversed along the last dim" in said.en and "倒过来" in said.zh


def test_a_mask_of_removed_entries_is_worded_as_removal():
    removed = torch.zeros(5, 7, dtype=torch.bool)
    removed[:, 5:] = True  # the contract removes the last two tokens of every row
    user = removed.clone()
    user[0, 2] = True  # one token too many removed
    user[1, 6] = False  # one kept that should go
    case = Case(None, (), [], removing=("removed by top-k",))
    said = both(user, removed, case, "removed by top-k")
    assert said.en == "1 entries removed that the contract keeps; 1 entries kept that the contract removes", said.en
    assert "allowed" in both(user, removed, case, "kept by top-k").en  # a step whose True means allowed
