"""drill grade --trace on the training tasks (adamw, grad_clip, grpo): each correct fixture traces clean with every
line naming a step, in-place updates included, and their own mutants (drill/grade/tasks/<task>/mutants/) are named
at the line of their bug, with the step the reference expected there.

The trace runs on the real user side (a forked process), as in a grade.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from traced import the_line, trace, zh
from whiteboard_impls import correct_files

TASK_DIR = Path(__file__).parents[2] / "drill" / "grade" / "tasks"
# adamw's contract updates param, exp_avg and exp_avg_sq in place: its case declares them (Case.updates) so that
# writing them is no divergence

# the steps a correct file must reach: what the call gives back, returned or written into its inputs
RESULTS = {
    "adamw": {"new param", "m = β1·m + (1 - β1)·g", "v = β2·v + (1 - β2)·g²"},
    "grad_clip": {"clipped grad 0", "clipped grad 1", "clipped grad 2"},
    "grpo": {"output"},
}
# (task, mutant file, the text of the line its bug is on, the step the trace expects there; ...: any)
MUTANTS = [
    ("adamw", "adamw-decay-without-lr__1.py", "param.mul_(1 - weight_decay)", "p·(1 - lr·wd)"),
    ("adamw", "adamw-step-off-by-one__1.py", "m_hat = exp_avg / (1 - beta1**step)", "m̂ = m / (1 - β1^t)"),
    ("adamw", "adamw-step-off-by-one__2.py", "m_hat = exp_avg / (1 - beta1**t)", "m̂ = m / (1 - β1^t)"),
    ("adamw", "adamw-eps-inside-sqrt__1.py", "torch.sqrt(v_hat + eps)", "√v̂ + ε"),
    ("adamw", "adamw-no-bias-correction__1.py", "exp_avg_sq.sqrt() + eps, value=-lr", ...),
    ("adamw", "adamw-l2-not-decoupled__1.py", "grad = grad + weight_decay * param", "grad"),  # grad was to be used raw
    ("adamw", "mutates-input__adamw.py", "grad.mul_(1 - beta1)", None),  # grad is no input the contract updates
    ("grad_clip", "clip-per-parameter__1.py", "coef = max_norm / (norm + 1e-6)", ...),
    ("grad_clip", "mutates-input__grad_clip.py", "p.mul_(coef)", ...),
    ("grpo", "grpo-std-biased__1.py", "unbiased=False", "group std of rewards"),
    ("grpo", "grpo-advantages-batch-normalised__1.py", "mean = rewards.mean()", ...),
    ("grpo", "grpo-clip-wrong-side__1.py", "objective = torch.max(", "objective = min(ratio·A, clip(ratio)·A)"),
    ("grpo", "grpo-kl-sign__1.py", "kl = torch.exp(logps - ref_logps)", ...),
    ("grpo", "grpo-kl-sign__2.py", "per_token = -(objective + beta * kl)", "objective - β·kl"),
    ("grpo", "grpo-padding-in-mean__1.py", "return per_token.mean()", "output"),
    ("grpo", "grpo-padding-in-mean__2.py", "/ mask.numel()", "output"),
    ("grpo", "grpo-sequence-mean__1.py", "/ mask.sum(dim=1)", ...),
]
# (task, mutant, what the divergence says the wrong factor means, in English and in Chinese)
MEANINGS = [
    ("adamw", "adamw-decay-without-lr__1.py", "the decay not scaled by lr", "衰减没有乘 lr"),
    ("adamw", "adamw-step-off-by-one__1.py", "bias-corrected with step + 1", "偏差校正用了 step + 1"),
    ("adamw", "adamw-step-off-by-one__2.py", "bias-corrected with step - 1", "偏差校正用了 step - 1"),
    ("grpo", "grpo-std-biased__1.py", "the biased std (÷ G)", "有偏标准差"),
    ("grpo", "grpo-padding-in-mean__2.py", "divided by every position", "除以了全部位置数"),
]


CLEAN = [(task, path) for task in RESULTS for path in [TASK_DIR / task / "solution.py", *correct_files(task)]]
PARTLY_NAMED = {"grpo_trl"}  # TRL's reshapes and nan-aware statistics only feed the advantages: clean, not every line named


@pytest.mark.parametrize("task, path", CLEAN, ids=[f"{t}-{p.stem}" for t, p in CLEAN])
def test_a_correct_file_traces_clean_and_every_line_names_a_step(task, path):
    found = trace(path, task)
    assert found["first_divergence"] is None, found["first_divergence"]
    data = [row for row in found["trace"] if row["status"] != "aux"]
    assert data and all(row["status"] in ("match", "feeds") for row in data), found["trace"]
    assert RESULTS[task] <= {row["match"] for row in data}, found["trace"]
    if path.stem in PARTLY_NAMED:
        return
    for line in {row["line"] for row in data}:
        assert any(r["match"] for r in data if r["line"] == line), (line, found["trace"])


@pytest.mark.parametrize(
    "task, name, text, expected", MUTANTS, ids=[m[1].removesuffix(".py") for m in MUTANTS]
)
def test_a_mutant_is_named_at_the_line_of_its_bug(task, name, text, expected):
    path = TASK_DIR / task / "mutants" / name
    found = trace(path, task)["first_divergence"]
    assert found is not None and found["line"] == the_line(path, text), found
    assert expected is ... or found["expected"] == expected, found


@pytest.mark.parametrize("task, name, en, zh_text", MEANINGS, ids=[m[1].removesuffix(".py") for m in MEANINGS])
def test_a_wrong_factor_is_said_for_what_it_means(task, name, en, zh_text):
    found = trace(TASK_DIR / task / "mutants" / name, task)["first_divergence"]
    assert en in found["message"] and zh_text in zh(found["message"]), found
