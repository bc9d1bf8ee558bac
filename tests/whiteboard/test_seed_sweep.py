"""Probe inputs drawn from the grade's seed (issue 27): ``--seed N`` grades the same report again for tasks of
several kinds, another seed draws other sizes and values, files right only at the grader's fixed shapes fail on
the drawn ones, and (slow) every bundled solution passes at seeds other than the default.

Covered elsewhere, not repeated here: a fresh seed at every grade, the seed in ``--json`` and in the text report,
sdpa's checks reproduced by ``--seed`` (test_grade_cli); ``Context.sizes`` itself and a schedule right only at the
fixed configurations (test_hostile_values).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from drill.cli import app
from drill.grade.tasks import TASKS
from drill.whiteboard import catalog
from whiteboard_impls import HOSTILE, IMPLS, mutant

pytest.importorskip("torch")

runner = CliRunner()
FIXED = IMPLS / "fixed_shapes"


def grade(path, seed: int) -> dict:
    result = runner.invoke(app, ["grade", str(path), "--json", "--device", "cpu", "--seed", str(seed)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def untimed(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "duration_s"}


def messages(report: dict) -> dict[str, str]:
    return {c["id"]: c["message"] for c in report["checks"]}


@pytest.mark.usefixtures("warm_judge")
@pytest.mark.parametrize(
    ("path", "seed"),
    [
        (mutant("kv-cache-mask-top-left__1.py"), 7),  # a module decoded chunk by chunk: diagnosis, first divergence
        (HOSTILE / "lr_lookup.py", 41),  # plain floats in and out, failing on the drawn configuration
        (catalog.get("linear_attention").solution, 1234),  # a function of tensors, passing
    ],
    ids=["kv_cache", "lr_schedule", "linear_attention"],
)
def test_seed_n_grades_the_whole_report_again(path, seed):
    first = grade(path, seed)
    assert first["seed"] == seed and any(c["id"].endswith("drawn") for c in first["checks"])
    assert untimed(grade(path, seed)) == untimed(first)  # every message, Chinese included, and the diagnosis


@pytest.mark.usefixtures("warm_judge")
def test_another_seed_draws_other_sizes_and_values_but_the_same_edge_cases():
    one, other = (messages(grade(catalog.get("mha").solution, seed)) for seed in (5, 6))
    sizes = [m["numerical.drawn"].split(" (drawn from the seed)")[0] for m in (one, other)]
    assert all(s.startswith("B=") for s in sizes) and sizes[0] != sizes[1], sizes
    fixed_shapes = ("numerical.seed0", "numerical.seed1", "numerical.seed2", "gradient.x-and-weights")
    assert [one[i] for i in fixed_shapes] != [other[i] for i in fixed_shapes]  # their values are drawn from the seed
    assert one["stability.large-logits"] == other["stability.large-logits"]  # edge cases keep seed 0's inputs


HEADS_DRAWN = r"B=\d+, (T=\d+, )?\d+ heads? of \d+ \(drawn from the seed\): .*max error"


@pytest.mark.usefixtures("warm_judge")
@pytest.mark.parametrize(
    ("name", "seed", "drawn", "evidence"),
    [
        ("mha_scale_for_head_dim_4.py", 3, "numerical.drawn", HEADS_DRAWN),
        ("causal_scale_for_head_dim_4.py", 8, "numerical.drawn", HEADS_DRAWN),
        ("kv_cache_scale_for_head_dim_4.py", 13, "numerical.decode-drawn", HEADS_DRAWN),
        ("mla_scale_for_head_dim_4.py", 21, "numerical.decode-drawn", HEADS_DRAWN),
        ("linear_attention_four_dims.py", 3, "numerical.drawn", r"raised RuntimeError: .*linear_attention_four_dims\.py:14"),
    ],
)
def test_a_file_right_only_at_the_fixed_shapes_fails_on_the_drawn_ones(name, seed, drawn, evidence):
    """Softmax scales of 1/2, 1/sqrt(head_dim) only at the head_dim 4 of every fixed check of a module; prefix sums
    along axis 2, which is T only for the 4-D inputs of every fixed check of linear_attention."""
    report = grade(FIXED / name, seed)
    assert not report["passed"]
    assert [c["id"] for c in report["checks"] if c["status"] in ("fail", "error")] == [drawn]
    assert re.match(evidence, messages(report)[drawn]), messages(report)[drawn]


# --- every bundled solution at seeds other than the default (slow) ---------------------------------------------

SWEEP_SEEDS = 5


@pytest.fixture(scope="module")
def grader():
    from drill.grade.warm import WarmGrader

    with WarmGrader(threads=1) as warm:
        yield warm


def sweep_seeds(task: str) -> list[int]:
    """Five seeds per task, none of them 0 and not the same five for every task."""
    base = 1 + sum(map(ord, task)) * 7
    return [base + 101 * i for i in range(SWEEP_SEEDS)]


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_solution_passes_at_other_seeds(grader, task):
    from drill.grade.run import make_request

    failed = {}
    for seed in sweep_seeds(task):
        report = grader.grade(make_request(catalog.get(task).solution, task=task, device="cpu", seed=seed), 120)
        if not report.passed:
            failed[seed] = [f"{c.id}: {c.message}" for c in report.checks if c.status in ("fail", "error")]
    assert not failed, f"{task}'s solution fails at " + "; ".join(f"--seed {s}: {f}" for s, f in failed.items())
