"""The content languages and the locale's choice among them; imports nothing of drill's (``drill.config`` resolves ``--lang``)."""

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
