"""The bundled bank, loaded once for every fact-check module."""

from __future__ import annotations

import pytest

from drill.bank.load import load_bundled


@pytest.fixture(scope="session")
def bank():
    return load_bundled()
