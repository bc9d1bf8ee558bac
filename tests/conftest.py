"""Shared fixtures: every test gets its own empty DRILL_HOME and no extra banks."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def drill_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("drill_home")
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.delenv("DRILL_BANKS", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    return home
