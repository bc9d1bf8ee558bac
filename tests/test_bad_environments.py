"""A data folder or database drill cannot use: one line on stderr, exit 2, nothing recorded lost."""

from __future__ import annotations

import sqlite3

import pytest
from typer.testing import CliRunner

from drill.history import store
from drill.cli import app
from practice import add_attempt, write_bank

runner = CliRunner()


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = result.stderr.strip().splitlines()
    for fragment in fragments:
        assert fragment in line, line
    return line


@pytest.mark.parametrize("under", [False, True])
@pytest.mark.parametrize("command", [["bank", "list"], ["stats"], ["quiz", "--count", "1"]])
def test_drill_home_that_is_a_regular_file(tmp_path, monkeypatch, under, command):
    blocker = tmp_path / "home"
    blocker.write_text("my notes\n")
    monkeypatch.setenv("DRILL_HOME", str(blocker / "drill" if under else blocker))
    result = runner.invoke(app, command, input="")
    one_line_error(result, "DRILL_HOME", f"{blocker} is a file, not a folder")
    assert blocker.read_text() == "my notes\n"


def test_full_disk_mid_quiz_keeps_the_answers_given(tmp_path, drill_home, monkeypatch):
    bank = write_bank(tmp_path / "bank", [(f"q{i}", "L1", "fx", "open") for i in range(6)])
    real_connect = store.connect

    def tiny_disk(path=None):
        conn = real_connect(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 3}")  # a few pages left, then SQLITE_FULL
        return conn

    monkeypatch.setattr(store, "connect", tiny_disk)
    answer = " ".join(["attention"] * 300)  # ~3 kB: each answer needs a new page
    result = runner.invoke(app, ["quiz", "--bank", str(bank), "--topic", "fx", "--count", "6", "--lang", "en"], input=f"{answer}\n\n3\n" * 6)
    line = one_line_error(result, "the disk is full")
    conn = sqlite3.connect(drill_home / "drill.db")
    saved = conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    assert 1 <= saved < 6
    assert f"the {saved} answers given before it are saved" in line
    assert conn.execute("SELECT status FROM sessions").fetchall() == [("incomplete",)]
    assert conn.execute("SELECT COUNT(*) FROM attempts WHERE answer = ?", (answer,)).fetchone()[0] == saved


def _sqlite_file(path, setup: str) -> bytes:
    conn = sqlite3.connect(path)
    conn.executescript(setup)
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    "setup",
    [
        "PRAGMA user_version = 7;",  # an SQLite file with no tables at all
        "CREATE TABLE _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL);",
        "CREATE TABLE photos (name TEXT); INSERT INTO photos VALUES ('cat.jpg');",
    ],
)
def test_a_foreign_sqlite_file_is_refused_untouched(drill_home, setup):
    path = drill_home / "drill.db"
    before = _sqlite_file(path, setup)
    one_line_error(runner.invoke(app, ["stats"]), "is an SQLite file but not a drill database")
    assert path.read_bytes() == before
    assert not (drill_home / "drill.db-wal").exists()


def test_a_zero_length_file_becomes_a_drill_database(drill_home):
    (drill_home / "drill.db").write_bytes(b"")
    result = runner.invoke(app, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    assert sqlite3.connect(drill_home / "drill.db").execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(store.MIGRATIONS)


@pytest.mark.parametrize("table", ["attempts", "sessions", "config"])
@pytest.mark.parametrize("command", [["stats"], ["streak"], ["review"], ["history", "export", "h.json"], ["tasks"]])
def test_a_dropped_table_is_named(drill_home, tmp_path, monkeypatch, table, command):
    monkeypatch.chdir(tmp_path)
    conn = store.connect()
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute(f"DROP TABLE {table}")
    conn.close()
    one_line_error(runner.invoke(app, command), f"table `{table}` is missing")


def test_a_dropped_summary_is_rebuilt_from_the_log(drill_home):
    conn = store.connect()
    add_attempt(conn, __import__("datetime").datetime(2024, 5, 1, 9), rating=4)
    expected = {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in store.SUMMARY_TABLES}
    conn.execute("DROP TABLE topic_totals")
    conn.execute("DROP TRIGGER attempts_added")
    conn.close()
    conn = store.connect()
    assert {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in store.SUMMARY_TABLES} == expected
    result = runner.invoke(app, ["stats", "--json"])
    assert result.exit_code == 0 and '"attempts": 1' in result.stdout


def test_grade_refuses_an_unusable_database_before_grading(drill_home, tmp_path, monkeypatch):
    import drill.grade

    def never(*args, **kwargs):
        raise AssertionError("graded although the database was unusable")

    monkeypatch.setattr(drill.grade, "grade_file", never)
    (drill_home / "drill.db").write_text("not a database\n")
    solution = tmp_path / "attn.py"
    solution.write_text("def scaled_dot_product_attention(q, k, v, mask=None):\n    raise NotImplementedError\n")
    one_line_error(runner.invoke(app, ["grade", str(solution), "--task", "sdpa"]), "not a drill database")
