"""Issue 26 in the norms, the blocks and the dropout convention: a float32 RMSNorm that forgets the cast back is
named for that (not for statistics in half), the block finds the one-pass variance its LayerNorm part task finds,
also next to a second mistake, and a dropout argument with a default is left alone, so dropout applied in eval
mode shows again (correct/mha_dropout_default_arg.py, which honours eval mode, passes with the other correct files)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from drill.grade.battery import run_battery
from drill.grade.checks.conventions import plan
from drill.grade.checks.variance import CODE, one_pass_verdict
from whiteboard_impls import IMPLS

P = "POSITIONAL_OR_KEYWORD"
BROKEN = IMPLS / "broken"


def codes(path, task=None):
    report = run_battery(path, task=task)
    assert not report.passed
    return sorted(d.code for d in report.diagnosis)


# --- the dropout convention ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("init", "kwargs", "style"),
    [
        ([("d_model", P, False), ("n_heads", P, False), ("dropout", P, True)], {}, "contract"),
        ([("d_model", P, False), ("n_heads", P, False), ("attn_pdrop", P, True)], {}, "contract"),
        ([("d_model", P, False), ("n_heads", P, False), ("p", P, False)], {"d_model": 12, "n_heads": 3, "p": 0.0}, "by name"),
    ],
)
def test_a_dropout_argument_is_zeroed_only_when_the_call_needs_it(init, kwargs, style):
    got = plan(init, None, {"d_model": 12, "n_heads": 3})
    assert (got.kwargs, got.style) == (kwargs, style)


@pytest.mark.parametrize("name", ["dropout-in-eval__default_arg.py", "dropout-in-eval__annotated_p.py"])
def test_dropout_in_eval_behind_a_default_argument_is_named(name):
    assert codes(BROKEN / name) == ["dropout-in-eval"]


# --- rmsnorm: the cast back ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [BROKEN / "rmsnorm-not-cast-back__upcast_input.py", BROKEN / "rmsnorm-not-cast-back__stats_only.py"])
def test_float32_all_through_without_the_cast_back_is_named_for_it(path):
    report = run_battery(path)
    assert [d.code for d in report.diagnosis] == ["rmsnorm-not-cast-back"]
    failed = [c for c in report.checks if c.status == "fail"]
    assert failed and all("not cast back" in c.message and "float16 (x²" not in c.message for c in failed)


# --- the one-pass variance, shared by layernorm and the blocks ----------------------------------------


def _ln(x, w, b, correction=0, one_pass=False):
    mean = x.mean(-1, keepdim=True)
    if one_pass:
        var = ((x * x).mean(-1, keepdim=True) - mean * mean) * x.shape[-1] / (x.shape[-1] - correction)
    else:
        var = x.var(-1, keepdim=True, correction=correction)
    return (x - mean) / torch.sqrt(var + 1e-5) * w + b


def _references(x64, w, b, offset):
    def ref(correction):
        def both(centred):
            x = x64 - offset if centred else x64
            return _ln(x, w, b, correction), _ln(x.float(), w.float(), b.float(), correction)

        return both

    return [(None, ref(0)), ("layernorm-unbiased-variance", ref(1))]


@pytest.mark.parametrize(("correction", "explained"), [(0, "pass"), (1, "explained by layernorm-unbiased-variance alone")])
def test_one_pass_variance_is_found_beside_a_second_mistake(correction, explained):
    gen = torch.Generator().manual_seed(0)
    x64 = (torch.randn(4, 32, generator=gen, dtype=torch.float64) + 1000).float().double()
    w, b = 1 + 0.5 * torch.randn(32, generator=gen, dtype=torch.float64), torch.randn(32, generator=gen, dtype=torch.float64)
    user = [_ln(x.float(), w.float(), b.float(), correction, one_pass=True) for x in (x64, x64 - 1000)]
    verdict = one_pass_verdict("rows", *user, _references(x64, w, b, 1000.0))
    assert verdict.status == "fail" and verdict.codes == [CODE] and explained in verdict.message
    two_pass = [_ln(x.float(), w.float(), b.float(), correction) for x in (x64, x64 - 1000)]
    clean = one_pass_verdict("rows", *two_pass, _references(x64, w, b, 1000.0))
    assert clean.codes == [] and (clean.status == "pass") == (correction == 0)


def test_a_mistake_that_is_not_shift_invariant_is_not_called_one_pass():
    gen = torch.Generator().manual_seed(1)
    x64 = (torch.randn(4, 32, generator=gen, dtype=torch.float64) + 1000).float().double()
    w, b = torch.ones(32, dtype=torch.float64), torch.zeros(32, dtype=torch.float64)
    uncentred = [F.normalize(x.float(), dim=-1) for x in (x64, x64 - 1000)]  # no mean subtracted at all
    verdict = one_pass_verdict("rows", *uncentred, _references(x64, w, b, 1000.0))
    assert verdict.status == "fail" and verdict.codes == []


@pytest.mark.parametrize("style", ["block_module", "block_functional"])
def test_the_block_finds_the_one_pass_variance_of_its_layernorm(style):
    assert codes(BROKEN / f"layernorm-one-pass-variance__{style}.py") == [CODE]
