"""drill.text.lang stands alone: drill.config resolves --lang on top of it, so the two never import each other."""

from __future__ import annotations

import subprocess
import sys

import pytest

from drill import config
from drill.text import lang


def test_lang_imports_nothing_of_drills():
    code = "import sys, drill.text.lang; print(sorted(m for m in sys.modules if m.startswith('drill.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['drill.text', 'drill.text.lang', 'drill.version']"  # its package, and the root's version


@pytest.mark.parametrize(("given", "stored", "locale", "expected"), [("zh", "en", "en_US.UTF-8", "zh"), (None, "zh", "en_US.UTF-8", "zh"), (None, None, "zh_CN.UTF-8", "zh"), (None, None, "C", "en")])
def test_resolve_order(monkeypatch, given, stored, locale, expected):
    from drill.history import store

    monkeypatch.setenv("LANG", locale)
    if stored:
        config.set_value(store.connect(), "lang", stored)
    assert config.resolve(given) == expected
    assert lang.locale_lang() == ("zh" if locale.startswith("zh") else "en")
