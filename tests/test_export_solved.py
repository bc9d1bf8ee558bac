"""`drill export anki --solved`: one card per passed task with your passing code and the mistakes made on the way."""

from __future__ import annotations

import sqlite3
import zipfile

from typer.testing import CliRunner

from drill.export import anki as export_anki
from drill.history import store
from drill.cli import app
from drill.diagnosis_codes import all_codes

runner = CliRunner()
FIXTURE = "tests/fixtures/quiz_bank.yaml"


def solved_notes(apkg) -> list[list[str]]:
    with zipfile.ZipFile(apkg) as z:
        (apkg.parent / "collection.anki2").write_bytes(z.read("collection.anki2"))
    conn = sqlite3.connect(apkg.parent / "collection.anki2")
    try:
        return [flds.split("\x1f") for (flds,) in conn.execute("SELECT flds FROM notes WHERE mid = ?", (export_anki.SOLVED_MODEL_ID,))]
    finally:
        conn.close()


def test_a_passed_task_is_a_card_with_its_code_and_the_fixes_of_its_mistakes(tmp_path, drill_home):
    mine = tmp_path / "mine.py"
    mine.write_text("def scaled_dot_product_attention(q, k, v, mask=None):\n    return q < k  # passing, as far as this test knows\n")
    conn = store.connect()
    store.record_grade_run(conn, task="sdpa", file=str(mine), source="whiteboard", passed=False, codes=["not-implemented"], seconds=1)
    store.record_grade_run(conn, task="sdpa", file=str(mine), source="whiteboard", passed=False, codes=["scale-missing"], seconds=2)
    store.record_grade_run(conn, task="sdpa", file=str(mine), source="notebook", passed=True, codes=[], seconds=3)
    store.record_grade_run(conn, task="gqa", file=str(tmp_path / "gone.py"), source="grade", passed=True, codes=[], seconds=3)
    store.record_grade_run(conn, task="mha", file=str(mine), source="grade", passed=False, codes=["scale-missing"], seconds=3)
    result = runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg"), "--solved", "--bank", FIXTURE, "--topic", "fx-quiz"])
    assert result.exit_code == 0, result.output
    assert "2 solved whiteboard tasks" in result.output
    cards = {fields[0]: fields for fields in solved_notes(tmp_path / "d.apkg")}
    assert set(cards) == {"sdpa", "gqa"}  # mha failed only
    task, title, title_zh, code, mistakes, mistakes_zh = cards["sdpa"]
    assert title == "Scaled dot-product attention" and title_zh == "缩放点积注意力"
    assert "return q &lt; k  # passing" in code
    scale = all_codes()["scale-missing"]
    assert "scale-missing" in mistakes and scale.fix in mistakes and "not-implemented" not in mistakes
    assert scale.fix_zh in mistakes_zh
    assert "file gone" in cards["gqa"][3] and "No mistake on the way" in cards["gqa"][4]


def test_without_solved_the_deck_has_no_task_cards(tmp_path, drill_home):
    store.record_grade_run(store.connect(), task="sdpa", file="x.py", source="whiteboard", passed=True, codes=[], seconds=3)
    result = runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg"), "--bank", FIXTURE, "--topic", "fx-quiz"])
    assert result.exit_code == 0 and solved_notes(tmp_path / "d.apkg") == []
