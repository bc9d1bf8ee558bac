"""Anki and Markdown exports of the loaded bank."""

from __future__ import annotations

import sqlite3
import zipfile

import genanki
import pytest
from typer.testing import CliRunner

from drill import export_anki
from drill.bank import load
from drill.cli import app
from practice import write_bank

runner = CliRunner()
SPECS = [("mask-why", "L1", "masks", "choice"), ("rope-what", "L2", "rope", "open"), ("kv-size", "L3", "kv-cache", "numeric"), ("mask-pad", "L2", "masks", "open")]


@pytest.fixture(autouse=True)
def bank(tmp_path, monkeypatch):
    """Only a small test bank is loaded, whatever the bundled bank holds today."""
    folder = tmp_path / "bank"
    write_bank(folder, SPECS)
    monkeypatch.setattr(load, "bundled_bank_dir", lambda: folder)


def notes(apkg) -> list[tuple]:
    with zipfile.ZipFile(apkg) as z:
        (apkg.parent / "collection.anki2").write_bytes(z.read("collection.anki2"))
    conn = sqlite3.connect(apkg.parent / "collection.anki2")
    try:
        return conn.execute("SELECT guid, mid, flds, tags FROM notes ORDER BY guid").fetchall()
    finally:
        conn.close()


def test_anki_deck_has_bilingual_fields_and_stable_guids(tmp_path):
    result = runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg")])
    assert result.exit_code == 0, result.output
    assert "wrote 4 questions" in result.stdout
    rows = notes(tmp_path / "d.apkg")
    assert len(rows) == 4
    by_id = {flds.split("\x1f")[0]: (guid, mid, flds.split("\x1f"), tags) for guid, mid, flds, tags in rows}
    guid, mid, fields, tags = by_id["mask-why"]
    assert guid == genanki.guid_for("drill", "mask-why") and mid == export_anki.MODEL_ID
    assert fields[:4] == ["mask-why", "L1", "masks", "choice"]
    assert "Why mask-why?" in fields[4] and "<li><strong>A.</strong> yes</li>" in fields[4]
    assert "为什么 mask-why？" in fields[5] and "是" in fields[5]
    assert "Answer: A. yes" in fields[6] and "Because mask-why." in fields[6] and "first mask-why" in fields[6]
    assert "因为 mask-why。" in fields[7] and "第二 mask-why" in fields[7]
    assert set(tags.split()) == {"masks", "L1"}


def test_re_export_keeps_note_guids(tmp_path):
    (tmp_path / "1").mkdir(), (tmp_path / "2").mkdir()
    runner.invoke(app, ["export", "anki", str(tmp_path / "1" / "d.apkg")])
    runner.invoke(app, ["export", "anki", str(tmp_path / "2" / "d.apkg"), "--level", "L2"])
    first = {r[0] for r in notes(tmp_path / "1" / "d.apkg")}
    second = {r[0] for r in notes(tmp_path / "2" / "d.apkg")}
    assert len(second) == 2 and second <= first


def test_markdown_cheat_sheet_is_grouped_by_topic_then_level(tmp_path):
    result = runner.invoke(app, ["export", "markdown", str(tmp_path / "c.md"), "--lang", "en"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "c.md").read_text()
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# drill cheat sheet", "## kv-cache", "### L3 · kv-size", "## masks", "### L1 · mask-why", "### L2 · mask-pad", "## rope", "### L2 · rope-what"]
    assert "**Answer: 8 GB**" in text and "- first rope-what" in text


def test_markdown_in_chinese(tmp_path):
    runner.invoke(app, ["export", "markdown", str(tmp_path / "c.md"), "--lang", "zh", "--topic", "rope"])
    text = (tmp_path / "c.md").read_text()
    assert text.startswith("# drill 速查表") and "因为 rope-what。" in text and "**要点**" in text and "mask" not in text


def test_nothing_to_export_is_an_error(tmp_path):
    result = runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg"), "--topic", "nope"])
    assert result.exit_code == 2 and "no questions match" in result.stderr
    assert not (tmp_path / "d.apkg").exists()
