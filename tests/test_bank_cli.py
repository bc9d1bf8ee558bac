"""`drill bank list/show/stats` and user banks from --bank and DRILL_BANKS."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from drill.cli import app

runner = CliRunner()
FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"
BAD = Path(__file__).parent / "fixtures" / "bad_banks"


def listed(*args: str, env: dict | None = None) -> list[dict]:
    result = runner.invoke(app, ["bank", "list", "--json", *args], env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_list_json_has_the_documented_fields():
    rows = listed()
    assert len(rows) >= 150
    for row in rows:
        assert {"id", "level", "topic", "type", "langs"} <= row.keys()
        assert row["langs"] == ["en", "zh"]
    assert len({r["id"] for r in rows}) == len(rows)


def test_list_filters_by_level_and_topic():
    rows = listed("--level", "L2", "--topic", "masks")
    assert rows and all(r["level"] == "L2" and r["topic"] == "masks" for r in rows)
    both = listed("--level", "L1,L3")
    assert {r["level"] for r in both} == {"L1", "L3"}


def test_list_rejects_an_unknown_level():
    result = runner.invoke(app, ["bank", "list", "--level", "L5"])
    assert result.exit_code == 2 and "--level: 'L5' is not one of L1, L2, L3" in result.stderr


def test_list_table_names_every_question():
    result = runner.invoke(app, ["bank", "list", "--topic", "masks"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for row in listed("--topic", "masks"):
        assert row["id"] in result.stdout


def test_extra_bank_from_option_and_environment():
    extra_ids = {r["id"] for r in listed("--bank", str(FIXTURE))} - {r["id"] for r in listed()}
    assert extra_ids
    from_env = {r["id"] for r in listed(env={"DRILL_BANKS": os.pathsep.join([str(FIXTURE)])})}
    assert extra_ids <= from_env


def test_ids_stay_unique_across_loaded_banks(tmp_path):
    first_id = listed()[0]["id"]
    user_bank = tmp_path / "mine.yaml"
    user_bank.write_text((BAD / "dup" / "a.yaml").read_text().replace("shared-id", first_id), encoding="utf-8")
    result = runner.invoke(app, ["bank", "list", "--bank", str(user_bank)])
    assert result.exit_code == 2
    assert f"duplicate id {first_id!r}" in result.stderr and str(user_bank) in result.stderr


def test_show_renders_prompt_answer_and_key_points_in_the_chosen_language():
    from drill.bank.load import load_bundled

    q = next(iter(load_bundled().questions.values()))
    en = runner.invoke(app, ["bank", "show", q.id, "--lang", "en"], env={"COLUMNS": "400"})
    zh = runner.invoke(app, ["bank", "show", q.id, "--lang", "zh"], env={"COLUMNS": "400"})
    assert en.exit_code == zh.exit_code == 0
    assert q.key_points[0].en in en.stdout and q.key_points[0].zh in zh.stdout
    assert "要点" in zh.stdout and "Key points" in en.stdout


def test_show_unknown_id_and_bad_lang_are_usage_errors():
    result = runner.invoke(app, ["bank", "show", "no-such-id"])
    assert result.exit_code == 2 and "no-such-id" in result.stderr
    result = runner.invoke(app, ["bank", "show", "no-such-id", "--lang", "fr"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_stats_markdown_counts_match_the_bank():
    result = runner.invoke(app, ["bank", "stats", "--markdown"])
    assert result.exit_code == 0
    total_row = next(line for line in result.stdout.splitlines() if line.startswith("| **total**"))
    assert total_row.rstrip(" |").endswith(str(len(listed())))


def test_committed_coverage_doc_is_current():
    result = runner.invoke(app, ["bank", "stats", "--markdown"])
    doc = (Path(__file__).parent.parent / "docs" / "bank-coverage.md").read_text(encoding="utf-8")
    assert result.stdout.strip() in doc, "regenerate with: drill bank stats --markdown"


def test_piped_list_is_the_plain_text_of_the_styled_one(drill_home):
    """Piped output skips rich for speed; it must read exactly like rich's, minus the colours."""
    import re
    import subprocess
    import sys

    def run(**extra):
        env = {"DRILL_HOME": str(drill_home), "PATH": os.environ["PATH"], "COLUMNS": "200", **extra}
        return subprocess.run([sys.executable, "-m", "drill", "bank", "list"], capture_output=True, text=True, env=env, check=True).stdout

    plain, styled = run(), run(FORCE_COLOR="1")
    assert "\x1b[" in styled and "\x1b[" not in plain
    unstyled = re.sub(r"\x1b\[[0-9;]*m", "", styled)
    assert [line.rstrip() for line in unstyled.splitlines()] == plain.splitlines()


def test_show_prints_bracketed_bank_text_literally():
    """Key points such as "shape [n, m]" must not be eaten as rich markup tags."""
    result = runner.invoke(app, ["bank", "show", "attn-formula-steps", "--lang", "en"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.stderr
    assert "shape [n, m]." in result.stdout
