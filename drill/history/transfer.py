"""Move practice history between machines as JSON; import merges and never deletes.

Export writes every session, attempt, grade run, review card, task review and config key.
Import is additive and idempotent, all in one transaction:

* attempts, grade runs and task reviews are matched by ``uid``: present ones are skipped;
* sessions are matched by ``uid`` too (a file from before sessions had one gets the
  uid that migration 003 gives, from the session's own content) and attempts are
  re-linked to the local session id;
* a time later than now plus a day of clock skew is refused, naming the row: it
  would count as a practice day that has not happened yet; so is one before 2000;
* every value must be what drill itself writes, else the file is refused naming the row:
  text as UTF-8 (no lone surrogate such as ``\ud800``), ratings 1-4, levels L1-L3, booleans
  as 0/1 or JSON true/false (stored as 0/1), seconds finite and not negative, review cards
  as JSON objects;
* review cards and config keys are added only where the local database has none:
  local values always win, and config keys that differ are reported, never
  overwritten silently.

Columns are read from the live schema, so columns added by later migrations travel
too; a column the local database lacks is ignored.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from drill.errors import DrillError
from drill.text.messages import Msg
from drill.history.store import CLOCK_SKEW, session_uid, transaction

FORMAT = "drill-history"
VERSION = 1
TABLES = ("sessions", "attempts", "grade_runs", "review_state", "task_reviews")
UNIQUE = {"attempts": "uid", "grade_runs": "uid", "review_state": "question_id", "task_reviews": "uid"}
TIMESTAMPS = {
    "sessions": ("started_at", "ended_at"),
    "attempts": ("answered_at", "local_time"),
    "grade_runs": ("run_at", "local_time"),
    "task_reviews": ("reviewed_at", "local_time"),
}
SQLITE_INT = (-(2**63), 2**63 - 1)
FIRST_YEAR = 2000  # drill did not exist before: an earlier time is a broken clock or a forged row
LEVELS = ("L1", "L2", "L3")
BOOLEANS = {("attempts", "correct"), ("attempts", "timed_out"), ("grade_runs", "passed")}
RATINGS = {("attempts", "rating"), ("task_reviews", "rating")}
DURATIONS = {("attempts", "seconds"), ("attempts", "time_limit"), ("grade_runs", "seconds"), ("task_reviews", "seconds"),
             ("task_reviews", "limit_s"), ("task_reviews", "hints"), ("task_reviews", "failing_saves")}  # fmt: skip
MAX_DEPTH = 100  # an export nests four levels; where the parser gives up, the error names the line past this depth


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
        if not names:  # a schema from before the migration that adds this table
            data[table] = []
            continue
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
        raise DrillError("{path}: cannot write: {why}", path=str(path), why=exc.strerror or str(exc)) from None
    return {t: len(data[t]) for t in TABLES}


def read(path: Path) -> dict:
    """Parse and check an export file; raise a one-line DrillError on anything wrong."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DrillError("{path}: no such file", path=str(path)) from None
    except OSError as exc:
        raise DrillError("{path}: cannot read: {why}", path=str(path), why=exc.strerror or str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DrillError("{path}:{line}: not UTF-8 text (byte {byte})", path=str(path), line=line, byte=exc.start) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise DrillError("{path}:{line}: nested more than {depth} levels deep: not a drill history export", path=str(path), line=_too_deep(text) or 1, depth=MAX_DEPTH) from None
    except json.JSONDecodeError as exc:
        raise DrillError("{path}:{line}: not valid JSON: {why}", path=str(path), line=exc.lineno, why=exc.msg) from None
    except ValueError:  # a number longer than Python reads (4300 digits)
        long_number = re.search(r"\d{4000,}", text)
        line = text.count("\n", 0, long_number.start()) + 1 if long_number else 1
        raise DrillError("{path}:{line}: a number with thousands of digits: no drill history holds one", path=str(path), line=line) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DrillError('{path}: not a drill history export (expected "format": "{format}")', path=str(path), format=FORMAT)
    version = data.get("version")
    if type(version) is not int or version < 1:
        raise DrillError("{path}: `version` must be a whole number from 1 to {last}, not {given}", path=str(path), last=VERSION, given=json.dumps(version))
    if version > VERSION:
        raise DrillError("{path}: history format version {version} is newer than this drill supports; upgrade drill", path=str(path), version=version)
    for table in TABLES:
        rows = data.setdefault(table, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise DrillError("{path}: `{table}` must be a list of objects", path=str(path), table=table)
    if not isinstance(data.setdefault("config", {}), dict) or not all(isinstance(v, str) for v in data["config"].values()):
        raise DrillError("{path}: `config` must map keys to text values", path=str(path))
    if any(not _utf8(t) for t in (*data["config"], *data["config"].values())):
        raise DrillError("{path}: `config` holds text that is not valid UTF-8 (a lone surrogate)", path=str(path))
    return data


def _utf8(text: str) -> bool:
    """False for a lone surrogate (JSON's ``\ud800``), which SQLite cannot store as text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_deep(text: str) -> int | None:
    """The line where the JSON nests deeper than MAX_DEPTH (brackets inside strings do not count), else None."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return None


def _value_problem(value) -> str | None:
    """Why a value cannot go in a column, or None: columns hold text and finite 64-bit numbers."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return Msg("must be text or a number, not {given}", given=json.dumps(value)[:40])
    if isinstance(value, int) and not SQLITE_INT[0] <= value <= SQLITE_INT[1]:
        return Msg("{value} does not fit a 64-bit integer", value=value)
    if isinstance(value, float) and not math.isfinite(value):
        return Msg("{value} is not a finite number", value=value)
    return None


def _reference_problem(value) -> str | None:
    if value is None or (isinstance(value, (int, str)) and not isinstance(value, bool)):
        return None
    return Msg("must be a session's `ref` (a number or text), not {given}", given=json.dumps(value)[:40])


def _field_problem(table: str, name: str, value) -> str | None:
    """Why ``value`` is not what drill writes in ``table.name``, or None (``value`` is not None)."""
    if (table, name) in RATINGS and not (type(value) is int and 1 <= value <= 4):
        return Msg("must be a rating from 1 to 4, not {given}", given=json.dumps(value)[:40])
    if (table, name) in DURATIONS and not (type(value) in (int, float) and math.isfinite(value) and value >= 0):
        return Msg("must be a finite number of seconds, not negative: {given}", given=json.dumps(value)[:40])
    if (table, name) == ("attempts", "level") and value not in LEVELS:
        return Msg("must be one of {levels}, not {given}", levels=", ".join(LEVELS), given=json.dumps(value, ensure_ascii=False)[:40])
    if (table, name) == ("review_state", "card"):
        try:
            card = json.loads(value) if isinstance(value, str) else None
        except (ValueError, RecursionError):
            card = None
        if not isinstance(card, dict):
            return Msg("must be a review card: a JSON object as text")
    if isinstance(value, str) and not _utf8(value):
        return Msg("is not valid UTF-8 text (a lone surrogate)")
    return _value_problem(value)


def _check_row(path: Path, table: str, index: int, row: dict, columns: list[tuple[str, bool]], now: datetime) -> dict:
    """``row`` as it goes into the database (JSON booleans as 0/1); a one-line DrillError naming it otherwise."""
    where = f"{path}: {table}[{index}]"
    row = dict(row)
    for name, required in columns:
        if required and row.get(name) is None:
            raise DrillError("{where}: missing `{name}`", where=where, name=name)
        value = row.get(name)
        if (table, name) in BOOLEANS and value is not None:
            if value not in (0, 1) or type(value) not in (bool, int):
                raise DrillError("{where}: `{name}` must be 0, 1, true or false, not {given}", where=where, name=name, given=json.dumps(value)[:40])
            row[name] = value = int(value)
        problem = None if value is None else _field_problem(table, name, value)
        if problem:
            raise DrillError("{where}: `{name}` {problem}", where=where, name=name, problem=problem)
    problem = _reference_problem(row.get("ref" if table == "sessions" else "session_id"))
    if problem:
        raise DrillError("{where}: `{name}` {problem}", where=where, name="ref" if table == "sessions" else "session_id", problem=problem)
    horizon = now + CLOCK_SKEW
    for name in TIMESTAMPS.get(table, ()):
        if row.get(name) is None:  # only ended_at may be absent: required columns were checked above
            continue
        try:
            moment = datetime.fromisoformat(row[name])
            if name == "local_time":  # the wall clock where it was recorded: back to UTC with its offset
                moment = moment.replace(tzinfo=timezone.utc) - timedelta(minutes=int(row.get("utc_offset_min") or 0))
            elif moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            ahead = moment > horizon
        except (TypeError, ValueError, OverflowError):
            raise DrillError("{where}: `{name}` is not an ISO-8601 time: {given!r}", where=where, name=name, given=row[name]) from None
        if ahead:
            raise DrillError("{where}: `{name}` {given} is in the future (more than a day ahead of this clock); fix the clock that recorded it", where=where, name=name, given=row[name])
        if moment.year < FIRST_YEAR:
            raise DrillError("{where}: `{name}` {given} is before {year}; fix the clock that recorded it", where=where, name=name, given=row[name], year=FIRST_YEAR)
    return row


def merge(conn: sqlite3.Connection, data: dict, path: Path, now: datetime | None = None) -> Counts:
    """Add what ``data`` has and the database lacks, in one transaction."""
    counts, now = Counts(), now or datetime.now(timezone.utc)
    with transaction(conn):
        refs = _merge_sessions(conn, data["sessions"], data["attempts"], path, counts, now)
        for table in ("attempts", "grade_runs", "review_state", "task_reviews"):
            _merge_rows(conn, table, data[table], path, counts, refs, now)
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
        raise DrillError("{path}: config {key}: {value!r} {problem}", path=str(path), key=key, value=value, problem=exc.args[0]) from None


def _legacy_uids(rows: list[dict], attempts: list[dict]) -> list[str | None]:
    """For sessions exported before they had a uid: the one migration 003 gave the exporting machine."""
    first: dict = {}
    for attempt in attempts:
        ref, uid = attempt.get("session_id"), attempt.get("uid")
        if _reference_problem(ref) is None and isinstance(uid, str) and (ref not in first or uid < first[ref]):
            first[ref] = uid
    seen: dict[str, int] = {}
    uids = []
    for row in rows:
        if row.get("uid") is not None:
            uids.append(None)
            continue
        fields = (row.get("kind"), row.get("started_at"), row.get("options", "{}"))
        ref = row.get("ref") if _reference_problem(row.get("ref")) is None else None
        base = session_uid(*fields, first.get(ref))
        seen[base] = seen.get(base, -1) + 1
        uids.append(session_uid(*fields, first.get(ref), seen[base]))
    return uids


def _merge_sessions(conn: sqlite3.Connection, rows: list[dict], attempts: list[dict], path: Path, counts: Counts, now: datetime) -> dict:
    """Insert unknown sessions (matched by uid); return the file's session refs mapped to local ids."""
    columns = _columns(conn, "sessions")
    refs, added = {}, 0
    for i, (row, legacy) in enumerate(zip(rows, _legacy_uids(rows, attempts))):
        row = _check_row(path, "sessions", i, row, columns, now)
        row = {**row, "uid": row.get("uid") if legacy is None else legacy}
        found = conn.execute("SELECT id FROM sessions WHERE uid = ?", (row["uid"],)).fetchone()
        if found is None:
            cols = [n for n, _ in columns if n in row]
            cur = _insert(conn, "sessions", cols, [row[n] for n in cols], "", path, i)
            found, added = (cur.lastrowid,), added + 1
        if row.get("ref") is not None:
            refs[row["ref"]] = found[0]
    counts.added["sessions"], counts.present["sessions"] = added, len(rows) - added
    return refs


def _merge_rows(conn: sqlite3.Connection, table: str, rows: list[dict], path: Path, counts: Counts, refs: dict, now: datetime) -> None:
    columns = _columns(conn, table)
    known = {n for n, _ in columns}
    added = 0
    for i, row in enumerate(rows):
        row = _check_row(path, table, i, row, columns, now)
        if "session_id" in known:
            ref = row.get("session_id")
            if ref is not None and ref not in refs:
                raise DrillError("{path}: {table}[{index}]: session_id {ref!r} matches no session in the file", path=str(path), table=table, index=i, ref=ref)
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
        raise DrillError("{path}: {table}[{index}]: rejected by the database: {why}", path=str(path), table=table, index=index, why=str(exc)) from None


def import_file(conn: sqlite3.Connection, path: Path) -> Counts:
    """Merge the file, then bring review cards up to date now rather than in the next command."""
    from drill.practice import review

    counts = merge(conn, read(path), path)
    if counts.added.get("attempts"):
        review.sync(conn)
    return counts
