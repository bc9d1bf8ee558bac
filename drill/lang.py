"""Which language to show content in when ``--lang`` is not given."""

from __future__ import annotations

import locale
import os

LANGS = ("en", "zh")


def locale_lang() -> str:
    """``zh`` when the user's locale is Chinese, else ``en``."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    code = locale.getlocale()[0] or ""
    return "zh" if code.lower().startswith("zh") else "en"


def resolve(lang: str | None) -> str:
    """``--lang`` if given, else ``drill config set lang``, else the locale's language."""
    from drill.config import stored_lang

    return lang or stored_lang() or locale_lang()
