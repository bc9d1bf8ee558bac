"""The check battery, run in-process on every fixture: correct files pass, broken files name their bug, and every
check's evidence reads in Chinese from the catalog (zh_evidence.py).

The battery is the exact code the worker runs; running it here keeps the matrix fast,
while test_grade_isolation.py and test_grade_cli.py cover the child process.
"""

from __future__ import annotations

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.kernel_env import is_kernel_task
from drill.diagnosis_codes import all_codes
from drill.grade.report import CATEGORIES, STATUSES

from whiteboard_impls import BROKEN, CORRECT, IMPLS, expected_code, mutant
from zh_evidence import english_evidence

# A bool mask has no gradient; rope and softmax mix no positions, so nothing can leak; an AUC counts ranks and k-means picks argmins: no gradient, and k-means has no mask.
NOT_APPLICABLE = {"auc": {"gradient"}, "ring_allreduce": {"gradient", "mask-leak"}, "kmeans": {"gradient", "mask-leak"}, "padding": {"gradient"}, "sinusoidal": {"gradient", "mask-leak"}, "rope": {"mask-leak"}, "softmax": {"mask-leak"}, "sampling": {"gradient"}, "speculative": {"gradient"}, "bpe": {"gradient", "mask-leak", "stability"}, "lr_schedule": {"gradient", "mask-leak"}, "grad_clip": {"gradient", "mask-leak"}, "beam_search": {"gradient", "mask-leak"}, "triton_softmax": {"gradient"}, "triton_rmsnorm": {"gradient"}, "triton_cumsum": {"gradient", "stability"}, "triton_matmul": {"gradient"}, "triton_flash_attention": {"gradient"}, "pipeline_1f1b": {"gradient", "mask-leak"}}  # a forward kernel: no autograd


# A kernel fixture is graded under Triton's interpreter (seconds a grade, ~75 s for all of them), more than the suite's
# 6-minute budget leaves: the regular run keeps the guard's own case, the rest run in the slow pass (pytest -m slow).
REGULAR_KERNEL = "triton_softmax/mutants/kernel-mask-missing__1.py"


def slow_kernels(paths):
    return [pytest.param(p, marks=pytest.mark.slow) if any(map(is_kernel_task, p.parts)) and not p.as_posix().endswith(REGULAR_KERNEL)
            else p for p in paths]  # fmt: skip


@pytest.mark.parametrize("path", slow_kernels(CORRECT), ids=lambda p: p.stem)
def test_correct_implementation_passes(path):
    report = run_battery(path)
    failing = [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert report.passed, failing
    assert report.diagnosis == []
    assert {c.category for c in report.checks} >= set(CATEGORIES) - NOT_APPLICABLE.get(report.task, set())
    assert english_evidence(report) == []


@pytest.mark.parametrize("path", slow_kernels(BROKEN), ids=lambda p: p.stem)
def test_broken_implementation_is_diagnosed(path):
    report = run_battery(path)
    assert not report.passed
    assert expected_code(path) in [d.code for d in report.diagnosis]
    assert english_evidence(report) == []


def test_every_documented_code_has_a_broken_fixture():
    assert set(all_codes()) <= {expected_code(p) for p in BROKEN}


def test_checks_have_ids_categories_and_statuses():
    report = run_battery(CORRECT[0])
    assert len({c.id for c in report.checks}) == len(report.checks)
    assert all(c.status in STATUSES for c in report.checks)


def test_allow_builtins_lifts_the_rule():
    path = mutant("uses-builtin__1.py")
    report = run_battery(path, allow_builtins=True)
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert "--allow-builtins" in next(c for c in report.checks if c.id == "rules.builtins").message


def test_task_override_on_a_file_without_that_entry():
    report = run_battery(IMPLS / "correct" / "sdpa_matmul.py", task="mha")
    assert [c.id for c in report.checks] == ["load.entry"]
    assert "MultiHeadAttention" in report.checks[0].message
    assert [d.code for d in report.diagnosis] == ["not-implemented"]


def test_leak_evidence_names_the_pair():
    report = run_battery(mutant("causal-off-by-one__1.py"))
    leak = next(c for c in report.checks if c.id == "mask-leak.future")
    assert leak.status == "fail" and "position 0 changes when future position 1 changes" in leak.message
    jac = next(c for c in report.checks if c.id == "mask-leak.jacobian")
    assert "d out[0] / d x[1]" in jac.message


def test_unrecognised_layout_lists_accepted_names(tmp_path):
    source = (IMPLS / "correct" / "mha_separate_wq.py").read_text().replace("W_q", "query")
    path = tmp_path / "renamed.py"
    path.write_text(source)
    report = run_battery(path)
    layout = next(c for c in report.checks if c.id == "load.layout")
    assert layout.status == "fail"
    assert "q_proj" in layout.message and "c_attn" in layout.message
    assert next(c for c in report.checks if c.id == "numerical.seed0").status == "skip"


def test_fully_masked_rows_warn_without_failing():
    report = run_battery(IMPLS / "correct" / "sdpa_neg1e9.py")
    advisory = next(c for c in report.checks if c.id == "stability.fully-masked-row")
    assert advisory.status == "warn" and "torch >= 2.5 returns 0" in advisory.message
    assert report.passed


def test_cuda_device_is_refused_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    from drill.errors import DrillError

    with pytest.raises(DrillError, match="CPU-only"):
        run_battery(CORRECT[0], device="cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", ["sdpa_matmul", "mha_fused_qkv", "causal_c_attn"])
def test_cuda_runs_half_precisions(name):
    report = run_battery(IMPLS / "correct" / f"{name}.py", device="cuda")
    assert report.device.startswith("cuda")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert any("float16" in c.id for c in report.checks) and any("bfloat16" in c.id for c in report.checks)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_broken_is_still_diagnosed():
    report = run_battery(mutant("scale-missing__1.py"), device="cuda")
    assert "scale-missing" in [d.code for d in report.diagnosis]
