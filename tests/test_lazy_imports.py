"""`drill --help`, `bank`, `quiz` and `stats` must never import torch (it costs seconds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"
PROBE = """
import json, sys
from drill.cli import app
sys.argv = ["drill", *json.loads(sys.argv[1])]
try:
    app()
except SystemExit:
    pass
heavy = [m for m in ("torch", "drill.grade") if m in sys.modules]
sys.__stdout__.write("\\nHEAVY=" + json.dumps(heavy) + "\\n")
"""


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["bank", "list"],
        ["bank", "show", "attn-why-sqrt-dk"],
        ["bank", "validate", "questions"],
        ["quiz", "--count", "1", "--bank", str(FIXTURE)],
        ["stats"],
        ["streak"],
    ],
    ids=lambda a: " ".join(a[:2]) or "(bare)",
)
def test_command_does_not_import_torch(argv, drill_home):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        input="", capture_output=True, text=True, timeout=120,
        env={"DRILL_HOME": str(drill_home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )
    marker = next(line for line in done.stdout.splitlines() if line.startswith("HEAVY="))
    assert json.loads(marker.removeprefix("HEAVY=")) == [], done.stderr
