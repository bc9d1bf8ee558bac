"""User settings in the ``config`` table, validated on the way in so readers can trust them."""

from __future__ import annotations

import sqlite3
from typing import Callable

from drill.errors import DrillError
from drill.text.messages import Msg
from drill.text.lang import LANGS, locale_lang
from drill.paths import db_path


def _choice(*allowed: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(Msg("must be one of {allowed}", allowed=", ".join(allowed)))
        return value

    return check


def _int_in(low: int, high: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            number = int(value)
        except ValueError:
            raise ValueError(Msg("must be a whole number")) from None
        if not low <= number <= high:
            raise ValueError(Msg("must be between {low} and {high}", low=low, high=high))
        return str(number)

    return check


def _fsrs_parameters(value: str) -> str:
    """A JSON list of FSRS weights that fsrs itself accepts (count and bounds), stored normalised."""
    import json

    from drill.practice.schedule import questions

    try:
        weights = [float(w) for w in json.loads(value)]
        questions(weights)  # fsrs checks the count and each weight's bounds
    except (ValueError, TypeError) as exc:
        raise ValueError(Msg("must be a JSON list of FSRS weights ({why})", why=str(exc))) from None
    return json.dumps(weights)


# key -> (default, validator returning the normalised value, help)
KEYS: dict[str, tuple[str | None, Callable[[str], str], Msg]] = {
    "lang": (None, _choice(*LANGS), Msg("content language when --lang is absent (default: from the locale)")),
    "daily-goal": ("5", _int_in(1, 1000), Msg("answers per day that count as a practice day")),
    "day-start-hour": ("4", _int_in(0, 23), Msg("local hour at which a new practice day starts")),
    "streaks": ("on", _choice("on", "off"), Msg("show the streak line after sessions")),
    "fsrs-parameters": (None, _fsrs_parameters, Msg("FSRS weights for questions' reviews, set by drill review --optimize (default: FSRS's)")),
}


def _known(key: str) -> None:
    if key not in KEYS:
        from drill.text.suggest import hint

        raise DrillError("unknown config key {key!r}{hint} (known: {keys})", key=key, hint=hint(key, KEYS), keys=", ".join(KEYS))


def get(conn: sqlite3.Connection, key: str) -> str | None:
    """The stored value, else the default (None when the default is computed elsewhere)."""
    _known(key)
    row = conn.execute("SELECT value FROM config WHERE key = ?", (key,)).fetchone()
    return row[0] if row else KEYS[key][0]


def shown(conn: sqlite3.Connection, key: str) -> str:
    """The value in effect: the stored one, else the default (the locale's language for ``lang``)."""
    value = get(conn, key)
    if value is not None:
        return value
    return locale_lang() if key == "lang" else Msg("FSRS defaults")


def set_value(conn: sqlite3.Connection, key: str, value: str) -> str:
    """Validate and store ``value``; return it as stored."""
    _known(key)
    try:
        value = KEYS[key][1](value.strip())
    except ValueError as exc:
        raise DrillError("config {key}: {value!r} {problem}", key=key, value=value, problem=exc.args[0]) from None
    from drill.history import store  # here: resolving --lang (every screen) needs no store, nor its json

    with store.transaction(conn):
        conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES (?, ?)", (key, value))
    return value


def stored_lang() -> str | None:
    """The configured language, read without creating or migrating the database (for ``drill bank``)."""
    path = db_path()
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM config WHERE key = 'lang'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row and row[0] in LANGS else None


def resolve(lang: str | None) -> str:
    """``--lang`` if given, else ``drill config set lang``, else the locale's language."""
    return lang or stored_lang() or locale_lang()
