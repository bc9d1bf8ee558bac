"""The diagnosis explains the outputs jointly: no code for a mistake the file does not make, never two codes
that contradict each other, and a check's code the outputs do not support is only a candidate ("possibly"),
kept out of the stored codes, the stats and the schedule.

The task-level cases use a small fake task (a probe is y = x * (1 + gain) + shift, NaN where a variant
blocks everything), so each rule of drill.grade.diagnose is tested on outputs chosen to hit it; the
candidate-style files are graded for real."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.diagnose import judge
from drill.grade.report import Check, Report
from drill.views import grade_view
from drill.diagnosis_codes import explain
from whiteboard_impls import IMPLS

FAIL = Check("numerical.seed0", "numerical", "fail", "output: max error 1 at [0] (allowed 1e-05)")


@dataclass(frozen=True)
class Knobs:
    gain: float = 0.0
    shift: float = 0.0
    blocked: bool = False  # NaN on the whole masked probe: a mask inverted under a softmax over the queries


@dataclass(frozen=True)
class Probe:
    x: torch.Tensor
    masked: bool
    user_out: torch.Tensor

    def user(self, ctx):
        return self.user_out

    def expected(self, variant):
        v = variant if isinstance(variant, Knobs) else Knobs()
        out = self.x * (1 + v.gain) + v.shift
        return torch.full_like(out, float("nan")) if v.blocked and self.masked else out


class FakeTask:
    name = "fake"

    def __init__(self, user, hypotheses):
        self.user, self.found = user, hypotheses

    def probes(self, ctx):
        x = torch.linspace(-2, 3, 12, dtype=torch.float64)
        return [Probe(x, masked, self.user(x, masked)) for masked in (False, True)]

    def hypotheses(self, ctx):
        return self.found


HYPOTHESES = [("mask-ignored", Knobs(gain=1.0)), ("mask-inverted", Knobs(shift=0.5)), ("scale-missing", Knobs(gain=-0.5)),
              ("mask-after-softmax", Knobs(gain=1.0, blocked=True))]  # fmt: skip


def judged(user, *codes, hypotheses=HYPOTHESES):
    checks = [FAIL, Check("mask-leak.padding", "mask-leak", "fail", "leak", list(codes))]
    return judge(checks, FakeTask(lambda x, masked: user(x), hypotheses), ctx=object())


def test_two_contradicting_codes_keep_the_one_the_outputs_support():
    confirmed, candidates = judged(lambda x: 2 * x, "mask-inverted", "mask-ignored")
    assert confirmed == ["mask-ignored"]
    assert candidates == []  # mask-inverted contradicts a confirmed code: not even "possibly"


def test_contradicting_check_codes_without_evidence_are_never_both_reported():
    confirmed, _ = judge([Check("a", "mask-leak", "fail", "leak", ["mask-inverted", "mask-ignored"])])
    assert confirmed == ["mask-inverted"]


def test_a_check_code_whose_hypothesis_moves_away_from_the_outputs_is_only_possible():
    confirmed, candidates = judged(lambda x: x - 3, "mask-inverted")  # nothing explains; +0.5 goes the wrong way
    assert (confirmed, candidates) == ([], ["mask-inverted"])


@pytest.mark.parametrize("user", [lambda x: x + 0.45, lambda x: 2 * x + 7], ids=["toward", "another-form"])
def test_a_check_code_stays_confirmed_unless_its_hypothesis_moves_away(user):
    """Closer (+0.5 for +0.45), or neither closer nor farther (a form of the mistake the hypothesis does not model)."""
    assert judged(user, "mask-inverted") == (["mask-inverted"], [])


def test_a_check_code_the_explanation_leaves_out_is_possible_unless_the_probes_cannot_see_it():
    confirmed, candidates = judged(lambda x: 0.5 * x, "mask-inverted")  # scale-missing alone explains the outputs
    assert (confirmed, candidates) == (["scale-missing"], ["mask-inverted"])
    invisible = [*HYPOTHESES[:3], ("mask-on-queries", Knobs())]  # a variant the probes do not tell from the correct one
    confirmed, candidates = judged(lambda x: 0.5 * x, "mask-on-queries", hypotheses=invisible)
    assert (sorted(confirmed), candidates) == (["mask-on-queries", "scale-missing"], [])


def test_a_check_code_with_no_hypothesis_is_direct_evidence():
    confirmed, candidates = judged(lambda x: 0.5 * x, "mutates-input")
    assert (confirmed, candidates) == (["mutates-input", "scale-missing"], [])  # the checks' codes first


def test_a_variant_that_is_nan_wherever_it_changes_a_probe_explains_nothing():
    """The variant matches the unmasked probe and is NaN on all of the masked one: nothing is left to compare there,
    so it explains nothing (it once did, which named mask-after-softmax for a file without that bug)."""
    user = FakeTask(lambda x, masked: 5 * x if masked else 2 * x, HYPOTHESES)
    assert judge([FAIL], user, ctx=object()) == ([], [])


def test_two_bugs_are_named_by_their_combination_and_nothing_else():
    """scale-missing + mask-inverted explain the outputs; mask-after-softmax + mask-inverted match the unmasked probe
    too, but are NaN on all of the masked one: not named."""
    found = [("mask-inverted", Knobs(shift=0.5)), ("scale-missing", Knobs(gain=-0.5)),
             ("mask-after-softmax", Knobs(gain=-0.5, blocked=True))]  # fmt: skip
    confirmed, candidates = judged(lambda x: 0.5 * x + 0.5, hypotheses=found)
    assert (sorted(confirmed), candidates) == (["mask-inverted", "scale-missing"], [])


@pytest.mark.parametrize("name", ["softmax-wrong-dim__sdpa_neg1e9.py", "softmax-wrong-dim__mha_mask_kept.py"])
def test_softmax_over_the_queries_with_the_mask_kept_is_that_bug_alone(name):
    """The issue's second file (and a -1e9 form, whose fully masked key columns average instead of giving NaN):
    no mask code beside the one bug, not even as a candidate."""
    report = run_battery(IMPLS / "broken" / name)
    assert [d.code for d in report.diagnosis] == ["softmax-wrong-dim"]
    assert report.candidates == []


def candidate_report() -> Report:
    return Report(task="sdpa", device="cpu", checks=[FAIL], diagnosis=explain(["scale-missing"]),
                  candidates=explain(["mask-inverted"]))  # fmt: skip


def test_candidates_travel_apart_from_the_diagnosis():
    report = Report.from_wire(json.loads(json.dumps(candidate_report().to_wire())))
    assert [d.code for d in report.diagnosis] == ["scale-missing"]
    assert [d.code for d in report.candidates] == ["mask-inverted"]
    data = candidate_report().to_dict()
    assert [d["code"] for d in data["diagnosis"]] == ["scale-missing"]
    assert [d["code"] for d in data["candidates"]] == ["mask-inverted"]
    assert "candidates" not in Report(task="sdpa", device="cpu", checks=[FAIL]).to_dict()


@pytest.mark.parametrize("lang, word", [("en", "possibly mask-inverted"), ("zh", "可能是 mask-inverted")])
def test_a_candidate_is_shown_as_possible(lang, word, capsys):
    grade_view.print_report(candidate_report(), as_json=False, lang=lang)
    shown = capsys.readouterr().out
    assert word in shown
    assert "possibly scale-missing" not in shown and "可能是 scale-missing" not in shown


@pytest.mark.parametrize("lang, word", [("en", "possibly mask-inverted"), ("zh", "可能是 mask-inverted")])
def test_the_whiteboard_shows_a_candidate_as_possible(lang, word, capsys):
    from drill.views.whiteboard_view import SessionView

    SessionView(lang).graded(candidate_report(), left_s=60.0)
    shown = capsys.readouterr().out
    assert word in shown and "scale-missing" in shown
