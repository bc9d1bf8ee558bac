"""Issue 26 in bpe, quantize and beam_search: a mistake is named however a candidate writes it (an overlapping merge
that looks back, a clamp to the int8 range, a truncation one float32 rounding away from the reference, a beam that
loses what finishes on the last step, a length normalisation), and code right at its own precision passes with a note
(an epsilon guard on rows of 1e-30, a beam score as a float32 0-d tensor)."""

from __future__ import annotations

import re
import types
from itertools import combinations
from pathlib import Path

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.tasks.beam_search import task as beam
from drill.grade.tasks.bpe import task as bpe
from drill.grade.tasks.quantize import task as quant

from whiteboard_impls import IMPLS

FORMS = [
    "bpe-overlapping-merge__lookback", "bpe-overlapping-merge__windows",
    "quant-255-not-127__int8_range", "quant-no-clamp__int8_range", "quant-truncation__float32", "quant-truncation__reciprocal",
    "beam-finished-dropped__retire_next_step", "beam-finished-dropped__cut_at_max_len",
    "beam-length-normalised__mean", "beam-length-normalised__gnmt", "beam-length-normalised__normalised_score",
]  # fmt: skip


def check(report, check_id):
    return next(c for c in report.checks if c.id == check_id)


@pytest.mark.parametrize("name", FORMS)
def test_each_written_form_is_named_and_nothing_else(name):
    report = run_battery(IMPLS / "broken" / f"{name}.py")
    assert not report.passed
    assert [d.code for d in report.diagnosis] == [name.split("__")[0]]


A, AA = 97, 256


@pytest.mark.parametrize(("overlap", "run3", "run4", "abab"), [
    ("", [AA, A], [AA, AA], [AA, AA]),  # left to right without overlap
    ("advance", [AA, AA, A], [AA, AA, AA, A], [AA, 98, AA, 98]),  # i += 1 after a match: every second token kept again
    ("back", [AA], [AA], [AA, AA]),  # merged with the previous input token: a run collapses, (a, b) is right
    ("windows", [AA, AA], [AA, AA, AA], [AA, AA]),  # every matching window, each match's second token dropped
])  # fmt: skip
def test_overlapping_merge_forms_on_a_run(overlap, run3, run4, abab):
    variant = bpe.Variant(overlap=overlap)
    assert bpe.merge([A] * 3, (A, A), AA, variant) == run3
    assert bpe.merge([A] * 4, (A, A), AA, variant) == run4
    assert bpe.merge([A, 98, A, 98], (A, 98), AA, variant) == abab


def test_bpe_probes_do_not_hinge_on_the_tie_rule_in_any_form():
    for _, variant in bpe.HYPOTHESES:
        for text, n in bpe.PROBE_TRAIN:
            assert bpe.train_reference(text, n, "first", variant) == bpe.train_reference(text, n, "smallest", variant), (variant, text)


def float32_truncation(w):
    """How a candidate writes it: float32 math, w * 127 / absmax, the int8 cast truncating."""
    wf = w.float()
    return (wf * 127 / wf.abs().amax(dim=1, keepdim=True)).to(torch.int8).double()


def test_a_float32_truncation_is_the_truncation_hypothesis_on_the_probes():
    gen = torch.Generator().manual_seed(3)
    w = torch.logspace(-2, 1, 6, dtype=torch.float64)[:, None] * torch.randn(6, 12, generator=gen, dtype=torch.float64)
    probe, trunc = quant.Probe(w), quant.QuantVariant(rounding="trunc")
    user, raw, expected = float32_truncation(w), quant.reference(w, trunc)[0], probe.expected(trunc)
    assert (user != raw).any()  # one float32 rounding puts an entry on the other side of the edge...
    compared = torch.isfinite(expected)
    assert torch.equal(user[compared], expected[compared])  # ...and the edge entries are the ones left out
    assert (~compared).sum() < w.numel() // 4 and not torch.equal(expected[compared], probe.expected(quant.QuantVariant())[compared])


def test_the_off_entry_is_called_a_rounding_difference():
    levels = check(run_battery(IMPLS / "broken" / "quant-truncation__float32.py"), "shape.q-and-scale")
    assert levels.status == "fail" and levels.codes == ["quant-truncation"]
    assert "up to a rounding difference" in levels.message and "truncation takes it to 126" in levels.message


def test_a_clamp_to_the_int8_range_says_why_minus_128_is_wrong():
    levels = check(run_battery(IMPLS / "broken" / "quant-no-clamp__int8_range.py"), "numerical.bfloat16-levels")
    assert levels.codes == ["quant-no-clamp"] and "the int8 range [-128, 127] is not symmetric" in levels.message


@pytest.mark.parametrize("name", ["quantize_eps_guard", "quantize_eps_scale"])
def test_an_epsilon_guard_passes_with_a_note(name):
    report = run_battery(IMPLS / "correct" / f"{name}.py")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert "an epsilon guard's floor instead of absmax / 127" in check(report, "stability.extreme-rows").message


def test_a_tiny_row_zeroed_at_its_true_scale_still_fails(tmp_path):
    zeroed = "    q = torch.where(scale < 1e-20, torch.zeros_like(q), q)\n    return q, scale\n"
    text = Path(quant.__file__).with_name("solution.py").read_text().replace("    return q, scale\n", zeroed)
    path = tmp_path / "tiny_zeroed.py"
    path.write_text(text)
    report = run_battery(path, task="quantize")
    assert check(report, "stability.extreme-rows").status == "fail"


def fake_ctx(seed: int):
    return types.SimpleNamespace(generator=lambda offset: torch.Generator().manual_seed(seed * 1000 + offset))


@pytest.mark.parametrize("seed", [0, 7])
def test_beam_probes_tell_every_two_codes_apart(seed):
    probes = beam.TASK.probes(fake_ctx(seed))
    named = [(None, beam.Variant()), *beam.HYPOTHESES]
    for (code_a, a), (code_b, b) in combinations(named, 2):
        if code_a != code_b:
            assert any(beam.beam_reference(p.model, a)[:2] != beam.beam_reference(p.model, b)[:2] for p in probes), (code_a, code_b)


def test_a_float32_tensor_score_is_judged_at_float32():
    report = run_battery(IMPLS / "correct" / "beam_search_float32_score.py")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert "a float32 score, judged at the precision it was computed in" in check(report, "numerical.beam-3").message


@pytest.mark.parametrize(("source", "returned", "off"), [
    ("beam_search_float32_score.py", "    return seq[1:], score\n", "3e-5"),  # a float32 tensor, off beyond float32's rounding
    ("beam_search_tensor.py", "    return best_tokens[1:].tolist(), best_score\n", "3e-9"),  # a float64 score, off in the 9th digit
])  # fmt: skip
def test_a_wrong_score_never_prints_as_the_expected_one(tmp_path, source, returned, off):
    text = (IMPLS / "correct" / source).read_text()
    assert returned in text
    path = tmp_path / "off.py"
    path.write_text(text.replace(returned, returned.rstrip("\n") + f" + {off}\n"))
    message = check(run_battery(path, task="beam_search"), "numerical.beam-3").message
    got, want = re.search(r"the score is (\S+), expected their total log-prob (\S+?)(?: \(|$)", message).groups()
    assert got != want and len(got) == len(want), message


def test_distinct_prints_both_numbers_to_the_digit_where_they_differ():
    assert beam.distinct(-1.3345084397, -1.3345084427) == ("-1.334508440", "-1.334508443")
    assert beam.distinct(-1.33448, -1.33451) == ("-1.33448", "-1.33451")
