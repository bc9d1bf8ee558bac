"""``drill grade`` records every run in the history; ``--bench`` with small T only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.history import store
from drill.cli import app
from drill.whiteboard import catalog

pytest.importorskip("torch")


@pytest.mark.usefixtures("warm_judge")
def test_grade_records_the_run_with_its_codes(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(catalog.get("sdpa").solution.read_text().replace(" / math.sqrt(q.size(-1))", ""))
    result = CliRunner().invoke(app, ["grade", str(wrong), "--device", "cpu", "--json"])
    assert result.exit_code == 1
    row = store.connect().execute("SELECT task, source, passed, codes, seconds FROM grade_runs").fetchone()
    assert (row["task"], row["source"], row["passed"], json.loads(row["codes"])) == ("sdpa", "grade", 0, ["scale-missing"])
    assert row["seconds"] > 0

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_bench_small_t_fits_quadratic_memory():
    result = CliRunner().invoke(app, ["grade", str(catalog.get("sdpa").solution), "--device", "cpu", "--json", "--bench", "--bench-max-t", "512"])
    assert result.exit_code == 0, result.output
    bench = json.loads(result.stdout)["bench"]
    assert [r["T"] for r in bench["rows"]] == [256, 512]
    assert bench["memory_slope"]["yours"] == pytest.approx(2.0, abs=0.25)
    assert bench["memory_slope"]["torch"] == pytest.approx(1.0, abs=0.25)
    assert all(r["yours"]["seconds"] > 0 and r["ratio_vs_torch"] > 0 for r in bench["rows"])

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_bench_on_a_module_task_still_shows_the_passing_report():
    module_file = Path(__file__).parent / "impls" / "correct" / "mha_separate_wq.py"
    result = CliRunner().invoke(app, ["grade", str(module_file), "--device", "cpu", "--json", "--bench"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["task"] == "mha" and report["bench"] is None
