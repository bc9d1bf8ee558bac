"""``--help`` in other languages: one gettext catalog per language, ``locale/<lang>/LC_MESSAGES/help.po`` (compiled to
``help.mo`` with Babel), whose msgids are the English texts as ``drill/cli.py`` writes them. Read only when help is shown."""

from __future__ import annotations

import gettext
from pathlib import Path

LOCALE = Path(__file__).parent / "locale"
DOMAIN = "help"


def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of ``lang``; for a language without one, the English texts themselves."""
    return gettext.translation(DOMAIN, LOCALE, languages=[lang], fallback=True)
