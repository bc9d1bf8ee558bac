"""`drill tasks` in a 60-column terminal: every task id whole, titles wrapped, tracks on rows of their own."""

from __future__ import annotations

from typer.testing import CliRunner

from drill.cli import app
from drill.views.console import out
from drill.whiteboard import catalog


def test_ids_are_never_cut_at_60_columns(drill_home, monkeypatch):
    monkeypatch.setattr(out, "width", 60)
    result = CliRunner().invoke(app, ["tasks", "--lang", "en"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 60
    cells = {line.split("│")[1].strip() for line in lines if line.count("│") > 2}
    assert set(catalog.load()) <= cells  # each id whole in its own cell, none with an ellipsis
    assert "attention" in cells and "…" not in "".join(cells)
