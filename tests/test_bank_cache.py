"""The compiled bank cache: used when the file is unchanged, never trusted otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drill.bank import cache, load

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"


@pytest.fixture
def bank_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_bytes(FIXTURE.read_bytes())
    return path


def _no_parsing(monkeypatch):
    def refuse(*args):
        raise AssertionError("the YAML was parsed although the cache is fresh")

    monkeypatch.setattr(load, "_fast", refuse)
    monkeypatch.setattr(load, "_detailed", refuse)


def test_second_load_comes_from_the_cache(bank_file, monkeypatch):
    first = load.load_paths([bank_file])
    _no_parsing(monkeypatch)
    assert load.load_paths([bank_file]).questions == first.questions


def test_an_edited_file_is_parsed_again(bank_file):
    load.load_paths([bank_file])
    text = bank_file.read_text(encoding="utf-8")
    first_id = next(line.split("id:")[1].strip() for line in text.splitlines() if line.strip().startswith("- id:"))
    bank_file.write_text(text.replace(f"id: {first_id}", "id: renamed-question", 1), encoding="utf-8")
    os.utime(bank_file, ns=(bank_file.stat().st_atime_ns, bank_file.stat().st_mtime_ns + 1_000_000))
    assert "renamed-question" in load.load_paths([bank_file]).questions


def test_a_corrupt_cache_entry_is_ignored(bank_file):
    expected = load.load_paths([bank_file]).questions
    cache._entry_path(bank_file).write_bytes(b"\x00garbage")
    assert load.load_paths([bank_file]).questions == expected


def test_validate_never_trusts_the_cache(bank_file, monkeypatch):
    load.load_paths([bank_file])
    monkeypatch.setattr(cache, "load", lambda *a: pytest.fail("validate read the cache"))
    assert load.load_paths([bank_file], use_cache=False).questions
