"""Anki and Markdown exports of the loaded bank."""

from __future__ import annotations

import sqlite3
import zipfile

import genanki
import pytest
from typer.testing import CliRunner

from drill.export import anki as export_anki
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
    result = runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg"), "--topic", "rope", "--level", "L1"])  # rope has only L2
    assert result.exit_code == 2 and "no questions match" in result.stderr
    assert not (tmp_path / "d.apkg").exists()


MATH_BANK = r"""format_version: 1
questions:
  - id: why-scale
    level: L1
    topic: attention
    type: open
    prompt:
      en: 'Why divide $QK^\top$ by $\sqrt{d_k}$?'
      zh: "为什么要把 $QK^\\top$ 除以\n$\\sqrt{d_k}$？"
    answer:
      en: "Each score is a sum of $d_k$ products, $a_i * b_i$ with variance 1:\n\n$$\\mathrm{Var}(q \\cdot k) = d_k$$"
      zh: "每个分数是 $d_k$ 个乘积之和，\n方差也是 $d_k$。"
    key_points:
      - {en: "variance d_k", zh: "方差 d_k", keywords: {en: [variance], zh: [方差]}}
      - {en: "softmax saturates", zh: "softmax 饱和", keywords: {en: [saturat], zh: [饱和]}}
"""


def test_formulas_are_mathjax_in_anki_and_stay_tex_in_the_cheat_sheet(tmp_path, monkeypatch):
    folder = tmp_path / "math"
    folder.mkdir()
    (folder / "bank.yaml").write_text(MATH_BANK, encoding="utf-8")
    monkeypatch.setattr(load, "bundled_bank_dir", lambda: folder)
    assert runner.invoke(app, ["export", "anki", str(tmp_path / "d.apkg")]).exit_code == 0
    ((_, _, flds, _),) = notes(tmp_path / "d.apkg")
    fields = flds.split("\x1f")
    assert r"\(QK^\top\)" in fields[4] and r"\(\sqrt{d_k}\)" in fields[4]
    assert r"\(a_i * b_i\)" in fields[6] and r"\[\mathrm{Var}(q \cdot k) = d_k\]" in fields[6] and "<em>" not in fields[6]
    assert "为什么要把 \\(QK^\\top\\) 除以" in fields[5] and "每个分数是 \\(d_k\\) 个乘积之和，方差也是 \\(d_k\\)。" in fields[7]  # joined
    assert runner.invoke(app, ["export", "markdown", str(tmp_path / "c.md"), "--lang", "zh"]).exit_code == 0
    assert "每个分数是 $d_k$ 个乘积之和，方差也是 $d_k$。" in (tmp_path / "c.md").read_text()
