"""Move practice history between machines as JSON; import merges and never deletes.

Export writes every session, attempt, grade run, review card and config key.
Import is additive and idempotent, all in one transaction:

* attempts and grade runs are matched by ``uid``: present ones are skipped;
* sessions have no uid, so they are matched by (kind, started_at) and attempts
  are re-linked to the local session id;
* review cards and config keys are added only where the local database has none:
  local values always win, and config keys that differ are reported, never
  overwritten silently.

Columns are read from the live schema, so columns added by later migrations travel
too; a column the local database lacks is ignored.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from drill.errors import DrillError
from drill.store import transaction

FORMAT = "drill-history"
VERSION = 1
TABLES = ("sessions", "attempts", "grade_runs", "review_state")
UNIQUE = {"attempts": "uid", "grade_runs": "uid", "review_state": "question_id"}
TIMESTAMPS = {"sessions": ("started_at",), "attempts": ("answered_at", "local_time"), "grade_runs": ("run_at", "local_time")}


@dataclass
class Counts:
    added: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)  # already in the database, skipped
    config_kept: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (local, file)


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, bool]]:
    """(name, required) for each column but the row id; required = NOT NULL with no default."""
    return [(r[1], bool(r[3]) and r[4] is None) for r in conn.execute(f"PRAGMA table_info({table})") if r[1] != "id"]


def dump(conn: sqlite3.Connection) -> dict:
    data: dict = {"format": FORMAT, "version": VERSION, "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    for table in TABLES:
        names = [n for n, _ in _columns(conn, table)]
        if table == "sessions":
            names = ["id", *names]
        rows = [dict(zip(names, r)) for r in conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid")]
        if table == "sessions":
            for row in rows:
                row["ref"] = row.pop("id")
        data[table] = rows
    data["config"] = dict(conn.execute("SELECT key, value FROM config ORDER BY key").fetchall())
    return data


def export(conn: sqlite3.Connection, path: Path) -> dict[str, int]:
    """Write the history to ``path`` atomically; return row counts per table."""
    data = dump(conn)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise DrillError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return {t: len(data[t]) for t in TABLES}


def read(path: Path) -> dict:
    """Parse and check an export file; raise a one-line DrillError on anything wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DrillError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DrillError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise DrillError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DrillError(f"{path}: not a drill history export (expected \"format\": \"{FORMAT}\")")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise DrillError(f"{path}: history format version {data.get('version')!r} is newer than this drill supports; upgrade drill")
    for table in TABLES:
        rows = data.setdefault(table, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise DrillError(f"{path}: `{table}` must be a list of objects")
    if not isinstance(data.setdefault("config", {}), dict) or not all(isinstance(v, str) for v in data["config"].values()):
        raise DrillError(f"{path}: `config` must map keys to text values")
    return data


def _check_row(path: Path, table: str, index: int, row: dict, columns: list[tuple[str, bool]]) -> None:
    where = f"{path}: {table}[{index}]"
    for name, required in columns:
        if required and row.get(name) is None:
            raise DrillError(f"{where}: missing `{name}`")
        value = row.get(name)
        if value is not None and not isinstance(value, (str, int, float)):
            raise DrillError(f"{where}: `{name}` must be text or a number")
    for name in TIMESTAMPS.get(table, ()):
        try:
            datetime.fromisoformat(row[name])
        except (TypeError, ValueError):
            raise DrillError(f"{where}: `{name}` is not an ISO-8601 time: {row[name]!r}") from None


def merge(conn: sqlite3.Connection, data: dict, path: Path) -> Counts:
    """Add what ``data`` has and the database lacks, in one transaction."""
    counts = Counts()
    with transaction(conn):
        refs = _merge_sessions(conn, data["sessions"], path, counts)
        for table in ("attempts", "grade_runs", "review_state"):
            _merge_rows(conn, table, data[table], path, counts, refs)
        for key, value in data["config"].items():
            value = _valid_config(path, key, value)
            local = conn.execute("SELECT value FROM config WHERE key = ?", (key,)).fetchone()
            if local is None:
                conn.execute("INSERT INTO config (key, value) VALUES (?, ?)", (key, value))
                counts.added["config"] = counts.added.get("config", 0) + 1
            elif local[0] != value:
                counts.config_kept[key] = (local[0], value)
    return counts


def _valid_config(path: Path, key: str, value: str) -> str:
    """Check a known key as ``drill config set`` would; keys from a newer drill pass through."""
    from drill.config import KEYS

    if key not in KEYS:
        return value
    try:
        return KEYS[key][1](value)
    except ValueError as exc:
        raise DrillError(f"{path}: config {key}: {value!r} {exc}") from None


def _merge_sessions(conn: sqlite3.Connection, rows: list[dict], path: Path, counts: Counts) -> dict:
    """Insert unknown sessions; return the file's session refs mapped to local ids."""
    columns = _columns(conn, "sessions")
    refs, added = {}, 0
    for i, row in enumerate(rows):
        _check_row(path, "sessions", i, row, columns)
        found = conn.execute("SELECT id FROM sessions WHERE kind = ? AND started_at = ?", (row["kind"], row["started_at"])).fetchone()
        if found is None:
            cols = [n for n, _ in columns if n in row]
            cur = _insert(conn, "sessions", cols, [row[n] for n in cols], "", path, i)
            found, added = (cur.lastrowid,), added + 1
        if row.get("ref") is not None:
            refs[row["ref"]] = found[0]
    counts.added["sessions"], counts.present["sessions"] = added, len(rows) - added
    return refs


def _merge_rows(conn: sqlite3.Connection, table: str, rows: list[dict], path: Path, counts: Counts, refs: dict) -> None:
    columns = _columns(conn, table)
    known = {n for n, _ in columns}
    added = 0
    for i, row in enumerate(rows):
        _check_row(path, table, i, row, columns)
        if "session_id" in known:
            ref = row.get("session_id")
            if ref is not None and ref not in refs:
                raise DrillError(f"{path}: {table}[{i}]: session_id {ref!r} matches no session in the file")
            row = {**row, "session_id": refs.get(ref)}
        cols = [n for n in row if n in known]
        cur = _insert(conn, table, cols, [row[n] for n in cols], f" ON CONFLICT({UNIQUE[table]}) DO NOTHING", path, i)
        added += cur.rowcount
    counts.added[table], counts.present[table] = added, len(rows) - added


def _insert(conn: sqlite3.Connection, table: str, cols: list[str], values: list, conflict: str, path: Path, index: int) -> sqlite3.Cursor:
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}){conflict}"
    try:
        return conn.execute(sql, values)
    except sqlite3.IntegrityError as exc:
        raise DrillError(f"{path}: {table}[{index}]: rejected by the database: {exc}") from None


def import_file(conn: sqlite3.Connection, path: Path) -> Counts:
    return merge(conn, read(path), path)
