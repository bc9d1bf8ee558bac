"""The decoding and tokenization tasks (sampling, speculative, bpe, beam_search): their exact
checks say what differs in the task's own terms, and what the contract leaves open is accepted."""

from __future__ import annotations

import pytest

from drill.grade.battery import run_battery

from whiteboard_impls import IMPLS, mutant


def check(report, check_id):
    return next(c for c in report.checks if c.id == check_id)


def test_bpe_mismatch_is_shown_as_bytes():
    report = run_battery(mutant("bpe-overlapping-merge__1.py"))
    assert check(report, "shape.merges").message.startswith("merge 1: expected (b'lo', b'w'), got (b'lo', b'o')")


@pytest.mark.parametrize(("name", "rule"), [("bpe_counter", "first"), ("bpe_torch_unique", "smallest")])
def test_bpe_accepts_either_tie_rule(name, rule):
    report = run_battery(IMPLS / "correct" / f"{name}.py")
    assert f"ties to the {rule} pair" in check(report, "numerical.train-corpus").message


def test_bpe_refuses_a_dict_of_merges_with_a_hint(tmp_path):
    source = (IMPLS / "correct" / "bpe_counter.py").read_text().replace("    return merges\n", "    return {p: 256 + k for k, p in enumerate(merges)}\n")
    path = tmp_path / "bpe_dict.py"
    path.write_text(source)
    report = run_battery(path, task="bpe")
    assert "a dict keyed by pairs?" in check(report, "numerical.train-corpus").message


def test_sampling_names_the_row_and_the_token():
    report = run_battery(mutant("top-p-drops-crossing-token__1.py"))
    message = check(report, "numerical.top-p").message
    assert message.startswith("row 0: kept tokens") and "which it keeps" in message


def test_sampling_large_negative_fill_is_named(tmp_path):
    source = (IMPLS / "correct" / "sampling_sort_scatter.py").read_text().replace('float("-inf")', "-1e9")
    path = tmp_path / "fill.py"
    path.write_text(source)
    report = run_battery(path, task="sampling")
    assert "must be exactly -inf, not -1e+09" in check(report, "numerical.top-k").message


def test_speculative_explains_the_decision():
    report = run_battery(mutant("spec-ratio-inverted__1.py"))
    message = check(report, "numerical.all-accepted").message
    assert "must be accepted: u = " in message and "< min(1, p/q)" in message


def test_beam_search_step_fn_refuses_bad_prefixes(tmp_path):
    path = tmp_path / "beam_1d.py"
    path.write_text("import torch\n\ndef beam_search(step_fn, bos_id, eos_id, beam_size, max_len):\n"
                    "    step_fn(torch.tensor([bos_id]))\n    return [], 0.0\n")  # fmt: skip
    report = run_battery(path, task="beam_search")
    assert "step_fn takes prefixes [N, t]" in check(report, "numerical.beam-3").message
    assert check(report, "numerical.beam-3").status == "error"


def test_beam_search_mismatch_prints_both_sequences():
    report = run_battery(mutant("beam-finished-dropped__1.py"))
    message = check(report, "numerical.beam-3").message
    assert message.startswith("beam 3, max_len 6: expected tokens [") and "its total log-prob is" in message


@pytest.mark.parametrize(("task", "source", "second"), [
    ("sampling", "sampling_sort_scatter.py", "def sample("), ("bpe", "bpe_counter.py", "def encode("),
])  # fmt: skip
def test_a_missing_second_function_is_not_implemented(tmp_path, task, source, second):
    text = (IMPLS / "correct" / source).read_text()
    path = tmp_path / "half.py"
    path.write_text(text[: text.index(second)])
    report = run_battery(path, task=task)
    assert [d.code for d in report.diagnosis] == ["not-implemented"]
    assert any("does not define" in c.message and c.status == "error" for c in report.checks)


def test_speculative_distribution_batch_reports_the_call_that_raised(tmp_path):
    """The 300 trials go to the user side in one request: a failure in the middle of them is still the user's
    exception, on its line, and the other checks run on."""
    source = (mutant("spec-ratio-inverted__1.py").parents[1] / "solution.py").read_text()
    source = source.replace("def speculative_accept(", "CALLS = [0]\n\n\ndef speculative_accept(", 1)
    body = "    CALLS[0] += 1\n    if CALLS[0] == 150:\n        raise ValueError('the 150th call')\n"
    path = tmp_path / "spec_150.py"
    lines = source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("def speculative_accept(")) + 1
    while not lines[at - 1].rstrip().endswith(":"):
        at += 1
    path.write_text("".join(lines[:at]) + body + "".join(lines[at:]))
    report = run_battery(path, task="speculative")
    distribution = check(report, "numerical.target-distribution")
    assert distribution.status in ("fail", "error") and "the 150th call" in distribution.message
    assert f"at spec_150.py:{at + 3} in speculative_accept" in distribution.message  # the raise, after the def line
    assert check(report, "numerical.all-accepted").status == "pass"
    assert check(report, "rules.builtins").status == "pass"
