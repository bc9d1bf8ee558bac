"""The solution screen: asked for before a pass it asks first and rates the task Again; after a pass it
shows the reference, the second style where one ships, your diff and the bank's hand-write question."""

from __future__ import annotations

import pytest
from fsrs import Rating
from typer.testing import CliRunner

from drill.history import store
from drill.bank.load import load_bank
from drill.cli import app
from drill.whiteboard import catalog, solutions

runner = CliRunner()
SDPA = catalog.get("sdpa")


def test_every_task_has_the_hand_write_question_of_its_own_entry_point():
    bank = load_bank(None)
    found = {task: solutions.handwrite_question(e, bank) for task, e in catalog.load().items()}
    assert not [task for task, q in found.items() if q is None]
    assert found["sdpa"].id == "attn-handwrite-sdpa"
    assert found["softmax"].id == "attn-handwrite-softmax"  # not the backward or flash questions, which mention softmax later
    assert found["flash"].id == "flash-handwrite-tiled"
    assert all("hand-write" in q.tags for q in found.values())


def test_before_a_pass_no_keeps_it_hidden_and_unrated(tmp_path, drill_home):
    result = runner.invoke(app, ["whiteboard", "sdpa", "--solution", "--file", str(tmp_path / "x.py"), "--lang", "en"], input="n\n")
    assert result.exit_code == 0, result.output
    assert "You have not passed sdpa yet" in result.output and "Solution not shown" in result.output
    assert "def scaled_dot_product_attention" not in result.output
    assert store.connect().execute("SELECT COUNT(*) FROM task_reviews").fetchone()[0] == 0


def test_before_a_pass_yes_shows_it_and_rates_again(tmp_path, drill_home, monkeypatch):
    from drill.views.console import out

    monkeypatch.setattr(out, "width", 140)  # wide enough for the two styles side by side
    mine = tmp_path / "x.py"
    mine.write_text(SDPA.template.read_text())
    result = runner.invoke(app, ["whiteboard", "sdpa", "--solution", "--file", str(mine), "--lang", "zh"], input="y\n")
    assert result.exit_code == 0, result.output
    assert "sdpa 评为“重来”" in result.output and "参考解法" in result.output
    assert "另一种正确写法" in result.output and "torch.einsum" in result.output  # sdpa ships a second style, side by side
    assert "-    raise NotImplementedError" in result.output  # the diff of the template against the reference
    assert "drill bank show attn-handwrite-sdpa" in result.output
    assert [r for (r,) in store.connect().execute("SELECT rating FROM task_reviews WHERE task = 'sdpa'")] == [int(Rating.Again)]


def test_after_a_pass_it_is_shown_without_asking(tmp_path, drill_home):
    mine = tmp_path / "mine.py"
    mine.write_text(SDPA.solution.read_text().replace("math.sqrt(q.size(-1))", "q.size(-1) ** 0.5"))
    store.record_grade_run(store.connect(), task="sdpa", file=str(mine), source="grade", passed=True, codes=[], seconds=1.0)
    result = runner.invoke(app, ["whiteboard", "sdpa", "--solution", "--file", str(mine), "--lang", "en"], input="")
    assert result.exit_code == 0, result.output
    assert "have not passed" not in result.output
    assert "+    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))" in result.output
    assert "-    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5" in result.output
    assert store.connect().execute("SELECT COUNT(*) FROM task_reviews").fetchone()[0] == 0


def test_a_task_without_a_second_style_says_so(tmp_path, drill_home):
    store.record_grade_run(store.connect(), task="gqa", file="g.py", source="grade", passed=True, codes=[], seconds=1.0)
    result = runner.invoke(app, ["whiteboard", "gqa", "--solution", "--file", str(tmp_path / "none.py"), "--lang", "en"])
    assert "no second style ships for gqa" in result.output and "no file of yours to compare" in result.output


def test_every_shipped_second_style_passes_the_grader():
    pytest.importorskip("torch")
    from drill.grade.run import make_request
    from drill.grade.warm import WarmGrader

    shipped = [e for e in catalog.load().values() if solutions.alternative_path(e).is_file()]
    assert len(shipped) >= 4
    with WarmGrader(threads=1) as grader:
        for e in shipped:
            path = solutions.alternative_path(e)
            report = grader.grade(make_request(path, task=e.id, device="cpu", seed=0, timeout=60.0), 60.0)
            assert report.passed and not report.diagnosis, (e.id, [c.id for c in report.checks if c.status != "pass"])
            assert path.read_text() != e.solution.read_text()

