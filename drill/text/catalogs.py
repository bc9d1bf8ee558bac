"""The gettext catalogs: ``locale/<lang>/LC_MESSAGES/<domain>.po``, compiled with Babel to the committed ``.mo``
that the standard library reads. Domains: ``help`` (``--help``, drill.cli_help) and ``messages`` (errors,
drill.text.messages); the msgids are the English texts. Read only when help or an error is shown."""

from __future__ import annotations

import gettext
from pathlib import Path

LOCALE = Path(__file__).parent / "locale"


def translations(domain: str, lang: str) -> gettext.NullTranslations:
    """The compiled catalog of ``domain`` in ``lang``; for a language without one, the English texts themselves."""
    return gettext.translation(domain, LOCALE, languages=[lang], fallback=True)
