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


ANSWERED = f"""
from drill.bank.load import load_bank
from drill.history import store
from drill.practice import review
conn = store.connect()
q = load_bank().get("attn-why-sqrt-dk")
with store.transaction(conn):
    uid = store.insert_attempt(conn, session_id=None, question=q, answer="a", correct=None, rating=3, seconds=1.0,
                               time_limit=None, timed_out=False)
    review.record(conn, q.id, uid)
"""


def test_todays_plan_reads_cached_cards_without_fsrs(drill_home):
    """Bare drill reads due dates from the card cache: fsrs (and OpenSSL, for card ids) load only to replay a card,
    which the answer above already did."""
    env = {"DRILL_HOME": str(drill_home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    subprocess.run([sys.executable, "-c", ANSWERED], check=True, env=env, timeout=120)
    probe = PROBE.replace('("torch", "drill.grade")', '("fsrs", "_hashlib")')
    done = subprocess.run([sys.executable, "-c", probe, "[]"], capture_output=True, text=True, timeout=120, env=env)
    marker = next(line for line in done.stdout.splitlines() if line.startswith("HEAVY="))
    assert json.loads(marker.removeprefix("HEAVY=")) == [], done.stderr
